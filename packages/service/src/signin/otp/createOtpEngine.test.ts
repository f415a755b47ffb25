import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../kernel/base/errors.ts'
import {
  CAPTCHA_SEND_LIMIT,
  createOtpEngine,
  memoryOtpStorage,
  type OtpMessage,
  type RateLimit,
  type SmsBudget,
} from './createOtpEngine.ts'
import { normalizeContact } from './normalizeContact.ts'
import { CROCKFORD_ALPHABET, randomCode, randomDigits } from './randomDigits.ts'
import { renderTemplate } from './renderTemplate.ts'

const ORG = 'org-1'
const publicKey = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), true))

function setup(
  overrides: {
    maxAttempts?: number
    captchaSendLimit?: RateLimit
    smsBudget?: SmsBudget
    knownNumber?: (number: string) => Promise<boolean>
  } = {},
) {
  let time = Date.UTC(2026, 0, 1)
  const storage = memoryOtpStorage()
  const records = storage.records
  const outbox: OtpMessage[] = []
  let ids = 0
  const engine = createOtpEngine({
    storage,
    // The engine only needs "claims in, token out"; the service passes its ES256 signer.
    issueToken: (claims) => `token:${JSON.stringify(claims)}`,
    deliver: (m) => void outbox.push(m),
    now: () => time,
    newId: () => `id-${++ids}`,
    ...overrides,
  })
  return {
    engine,
    records,
    outbox,
    advance: (ms: number) => {
      time += ms
    },
    now: () => time,
  }
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ApiError)
  const { errorCode, message, field, extra } = error as ApiError
  return { errorCode, message, details: { field, ...extra } as Record<string, unknown> }
}

describe('createOtpEngine', () => {
  it('sends a 6-digit code once, renders the template, and never stores the code', async () => {
    const { engine, outbox, records } = setup()
    const { otpId } = await engine.init({
      organizationId: ORG,
      otpType: 'OTP_TYPE_EMAIL',
      contact: ' Ada@Example.COM ',
      appName: 'Demo',
      emailTemplate: { subject: '{{appName}} code', body: 'Code {{ code }} ({{expiresInMinutes}} min)' },
    })
    expect(otpId).toBe('id-1')
    const code = outbox[0]!.code
    expect(code).toMatch(/^\d{6}$/)
    expect(outbox).toEqual([
      {
        otpId: 'id-1',
        organizationId: ORG,
        otpType: 'OTP_TYPE_EMAIL',
        contact: 'ada@example.com',
        code,
        subject: 'Demo code',
        body: `Code ${code} (5 min)`,
        sentAt: '2026-01-01T00:00:00.000Z',
      },
    ])
    expect(JSON.stringify([...records.values()])).not.toContain(code)
  })

  it('verifies the right code into a token bound to the public key, then refuses reuse', async () => {
    const { engine, outbox } = setup()
    const { otpId } = await engine.init({
      organizationId: ORG,
      otpType: 'OTP_TYPE_SMS',
      contact: '+14155550123',
    })
    const otpCode = outbox[0]!.code
    const { claims, verificationToken } = await engine.verify({
      organizationId: ORG,
      otpId,
      otpCode,
      publicKey,
    })
    const iat = Math.floor(Date.UTC(2026, 0, 1) / 1000)
    expect(claims).toEqual({
      id: 'id-2',
      verification_type: 'OTP_TYPE_SMS',
      contact: '+14155550123',
      public_key: publicKey,
      organization_id: ORG,
      exp: iat + 600,
      iat,
    })
    expect(verificationToken).toBe(`token:${JSON.stringify(claims)}`)
    expect(await refusal(engine.verify({ organizationId: ORG, otpId, otpCode, publicKey }))).toEqual({
      errorCode: 'OTP_INVALID',
      message: 'this code was already used; request a new one',
      details: { field: 'otpId' },
    })
  })

  it('refuses an expired code', async () => {
    const { engine, outbox, advance } = setup()
    const { otpId } = await engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_EMAIL', contact: 'a@b.io' })
    advance(300_000)
    const r = await refusal(engine.verify({ organizationId: ORG, otpId, otpCode: outbox[0]!.code }))
    expect(r.errorCode).toBe('OTP_EXPIRED')
  })

  it('honours a custom lifetime and code length', async () => {
    const { engine, outbox, advance } = setup()
    const { otpId } = await engine.init({
      organizationId: ORG,
      otpType: 'OTP_TYPE_EMAIL',
      contact: 'a@b.io',
      otpLength: 9,
      expirationSeconds: 60,
    })
    expect(outbox[0]!.code).toMatch(/^\d{9}$/)
    advance(59_000)
    await expect(
      engine.verify({ organizationId: ORG, otpId, otpCode: outbox[0]!.code }),
    ).resolves.toBeTruthy()
  })

  it('kills the OTP after 5 wrong codes, even the right one is refused then', async () => {
    const { engine, outbox } = setup()
    const { otpId } = await engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_EMAIL', contact: 'a@b.io' })
    const right = outbox[0]!.code
    const wrong = right === '000000' ? '111111' : '000000'
    const remaining: unknown[] = []
    for (let i = 0; i < 4; i++) {
      const r = await refusal(engine.verify({ organizationId: ORG, otpId, otpCode: wrong }))
      expect(r.errorCode).toBe('OTP_INVALID')
      remaining.push(r.details.attemptsRemaining)
    }
    expect(remaining).toEqual([4, 3, 2, 1])
    expect((await refusal(engine.verify({ organizationId: ORG, otpId, otpCode: wrong }))).errorCode).toBe(
      'OTP_ATTEMPTS_EXCEEDED',
    )
    expect((await refusal(engine.verify({ organizationId: ORG, otpId, otpCode: right }))).errorCode).toBe(
      'OTP_ATTEMPTS_EXCEEDED',
    )
  })

  it('counts concurrent wrong guesses one by one', async () => {
    const { engine, outbox, records } = setup()
    const { otpId } = await engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_EMAIL', contact: 'a@b.io' })
    const wrong = outbox[0]!.code === '000000' ? '111111' : '000000'
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => engine.verify({ organizationId: ORG, otpId, otpCode: wrong })),
    )
    expect(results.every((r) => r.status === 'rejected')).toBe(true)
    expect(records.get(otpId)).toMatchObject({ attempts: 5, status: 'locked' })
  })

  it('refuses an unknown id and an OTP of another organization alike', async () => {
    const { engine, outbox } = setup()
    const { otpId } = await engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_EMAIL', contact: 'a@b.io' })
    const code = outbox[0]!.code
    expect(await refusal(engine.verify({ organizationId: 'other', otpId, otpCode: code }))).toEqual({
      errorCode: 'OTP_INVALID',
      message: 'unknown otpId',
      details: { field: 'otpId' },
    })
    expect(
      (await refusal(engine.verify({ organizationId: ORG, otpId: 'nope', otpCode: code }))).errorCode,
    ).toBe('OTP_INVALID')
  })

  it('refuses a malformed public key and malformed codes before touching the OTP', async () => {
    const { engine, outbox, records } = setup()
    const { otpId } = await engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_EMAIL', contact: 'a@b.io' })
    const code = outbox[0]!.code
    expect(
      (
        await refusal(
          engine.verify({ organizationId: ORG, otpId, otpCode: code, publicKey: `04${'a'.repeat(64)}` }),
        )
      ).details,
    ).toEqual({ field: 'public_key' })
    expect((await refusal(engine.verify({ organizationId: ORG, otpId, otpCode: '12ab56' }))).details).toEqual(
      {
        field: 'otpCode',
      },
    )
    expect(records.get(otpId)).toMatchObject({ attempts: 0, status: 'pending' })
  })

  it('rate-limits init per contact: 3 a minute, 5 in 10 minutes, so a burst blocks at most 10 minutes', async () => {
    const { engine, advance } = setup()
    const send = (contact = 'a@b.io') =>
      engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_EMAIL', contact })
    for (let i = 0; i < 3; i++) await send()
    expect(await refusal(send('A@B.io'))).toEqual({
      errorCode: 'OTP_RATE_LIMITED',
      message: 'too many codes requested for this contact; try again later',
      details: { field: 'contact', retryAfterSeconds: 60 },
    })
    await expect(send('other@b.io')).resolves.toBeTruthy()
    advance(61_000)
    for (let i = 0; i < 2; i++) await send()
    const r = await refusal(send())
    expect(r.errorCode).toBe('OTP_RATE_LIMITED')
    expect(r.details.retryAfterSeconds).toBe(600 - 61)
    advance(539_000)
    await expect(send()).resolves.toBeTruthy()
  })

  it('a CAPTCHA pass lets one code past the send budget; its guesses have their own budget', async () => {
    const { engine, outbox, advance } = setup()
    const contact = 'c@b.io'
    const send = (captchaPass?: string) =>
      engine.init({
        organizationId: ORG,
        otpType: 'OTP_TYPE_EMAIL',
        contact,
        ...(captchaPass ? { captchaPass } : {}),
      })
    for (let i = 0; i < 3; i++) await send()
    expect((await refusal(send('made-up'))).errorCode).toBe('OTP_RATE_LIMITED')
    const pass = await engine.grantCaptchaPass('OTP_TYPE_EMAIL', 'C@b.io')
    const { otpId } = await send(pass)
    // Spent: the same pass does not work twice.
    expect((await refusal(send(pass))).errorCode).toBe('OTP_RATE_LIMITED')
    // Someone spends the contact's wrong-guess budget on the codes anyone can request...
    for (let n = 0; n < 2; n++)
      for (const message of outbox.slice(0, 3))
        for (let i = 0; i < 5; i++)
          await engine
            .verify({ organizationId: ORG, otpId: message.otpId, otpCode: '000000' })
            .catch(() => undefined)
    advance(61_000)
    const plain = await send()
    const plainCode = outbox.find((m) => m.otpId === plain.otpId)!.code
    expect(
      (await refusal(engine.verify({ organizationId: ORG, otpId: plain.otpId, otpCode: plainCode })))
        .errorCode,
    ).toBe('OTP_RATE_LIMITED')
    // ...and the CAPTCHA-passed code is still judged.
    const code = outbox.find((m) => m.otpId === otpId)!.code
    await expect(engine.verify({ organizationId: ORG, otpId, otpCode: code })).resolves.toHaveProperty(
      'verificationToken',
    )
    // A pass expires after two minutes.
    const late = await engine.grantCaptchaPass('OTP_TYPE_EMAIL', contact)
    advance(121_000)
    await send()
    expect((await refusal(send(late))).errorCode).toBe('OTP_RATE_LIMITED')
  })

  it("CAPTCHA passes are held to the contact's own ceiling; a pass refused by it is not spent", async () => {
    expect(CAPTCHA_SEND_LIMIT).toEqual({ perMinute: 10, perWindow: 10, windowMinutes: 10 })
    const { engine, outbox, advance } = setup({
      captchaSendLimit: { perMinute: 2, perWindow: 3, windowMinutes: 10 },
    })
    const contact = 'd@b.io'
    const send = (captchaPass?: string) =>
      engine.init({
        organizationId: ORG,
        otpType: 'OTP_TYPE_EMAIL',
        contact,
        ...(captchaPass ? { captchaPass } : {}),
      })
    const pass = () => engine.grantCaptchaPass('OTP_TYPE_EMAIL', contact)
    await send(await pass())
    await send(await pass())
    const kept = await pass()
    const perMinute = await refusal(send(kept))
    expect(perMinute).toMatchObject({ errorCode: 'OTP_RATE_LIMITED', details: { field: 'contact' } })
    expect(perMinute.details.retryAfterSeconds).toBe(60)
    // The refused pass was not spent: a minute later it sends the window's third code.
    advance(60_000)
    await send(kept)
    const perWindow = await refusal(send(await pass()))
    expect(perWindow.details.retryAfterSeconds).toBe(540)
    // Codes without a CAPTCHA are budgeted apart: they are sent, and do not spend the ceiling.
    await send()
    await send()
    expect(outbox).toHaveLength(5)
    advance(540_000)
    await send(await pass())
    expect(outbox).toHaveLength(6)
  })

  it('SMS codes are bounded service-wide an hour, whoever the numbers are; e-mail codes are not; the next hour frees it', async () => {
    const { engine, outbox, advance, now } = setup({ smsBudget: { maxPerHour: 3, maxPerHourNewNumbers: 3 } })
    // Pumping: each code to a different number, so no per-number budget sees it.
    const sms = (n: number) =>
      engine.init({
        organizationId: ORG,
        otpType: 'OTP_TYPE_SMS',
        contact: `+1415555${String(n).padStart(4, '0')}`,
      })
    // Start half an hour into a clock hour: the bound is per clock hour.
    advance(30 * 60_000)
    for (let n = 0; n < 3; n++) await sms(n)
    const over = await refusal(sms(3))
    expect(over).toMatchObject({
      errorCode: 'OTP_RATE_LIMITED',
      details: { limit: 'smsPerHour', retryAfterSeconds: 30 * 60 },
    })
    expect(outbox).toHaveLength(3)
    // E-mail codes are not SMS: not counted, not refused.
    await engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_EMAIL', contact: 'a@example.com' })
    expect(outbox).toHaveLength(4)
    // A refused code spent nothing: still refused until the hour ends, then 3 more go.
    advance(30 * 60_000 - 1)
    expect((await refusal(sms(4))).details.retryAfterSeconds).toBe(1)
    advance(1)
    expect(new Date(now()).getUTCMinutes()).toBe(0)
    for (let n = 5; n < 8; n++) await sms(n)
    expect((await refusal(sms(8))).errorCode).toBe('OTP_RATE_LIMITED')
    expect(outbox).toHaveLength(7)
  })

  it('pumping new numbers spends only their share of the hour: the rest stays for numbers users hold, whose codes still go', async () => {
    const known = new Set(['+14155559000', '+14155559001', '+14155559002'])
    const { engine, outbox } = setup({
      // Default share: half of 5, rounded up.
      smsBudget: { maxPerHour: 5 },
      knownNumber: async (number) => known.has(number),
    })
    const sms = (contact: string) => engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_SMS', contact })
    // The attacker's numbers, a different one each time: 3 go, then the new numbers' share is spent.
    for (let n = 0; n < 3; n++) await sms(`+1415555${String(n).padStart(4, '0')}`)
    expect(await refusal(sms('+14155550003'))).toMatchObject({
      errorCode: 'OTP_RATE_LIMITED',
      details: { limit: 'smsPerHourNewNumbers', retryAfterSeconds: 3600 },
    })
    expect(outbox).toHaveLength(3)
    // Users whose numbers the service knows still get theirs, up to the whole hour's bound.
    await sms('+14155559000')
    await sms('+14155559001')
    expect(outbox.map((message) => message.contact).slice(3)).toEqual(['+14155559000', '+14155559001'])
    expect((await refusal(sms('+14155559002'))).details.limit).toBe('smsPerHour')
    expect(outbox).toHaveLength(5)
  })

  it('SMS codes go only to the countries the operator lists, naming the contact; a number of no country is refused too', async () => {
    const { engine, outbox } = setup({ smsBudget: { allowedCountries: ['US', 'GB'] } })
    const sms = (contact: string) => engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_SMS', contact })
    await sms('+14155550123')
    await sms('+447400123456')
    // +1 is also Jamaica's and the British Virgin Islands' code, where pumping numbers are common.
    // +44 is also Guernsey's.
    for (const contact of ['+18765550123', '+12845550123', '+447911123456', '+79123456789', '+882345678901'])
      expect(await refusal(sms(contact)), contact).toMatchObject({
        errorCode: 'CONTACT_INVALID',
        details: { field: 'contact', allowedCountries: ['US', 'GB'] },
        message: expect.stringContaining('US, GB'),
      })
    expect(outbox.map((message) => message.contact)).toEqual(['+14155550123', '+447400123456'])
    // E-mail is not a country's.
    await engine.init({ organizationId: ORG, otpType: 'OTP_TYPE_EMAIL', contact: 'a@example.com' })
  })

  it('validates contacts and options', async () => {
    const { engine } = setup()
    const init = (otpType: 'OTP_TYPE_EMAIL' | 'OTP_TYPE_SMS', contact: unknown, more = {}) =>
      refusal(engine.init({ organizationId: ORG, otpType, contact, ...more }))
    expect((await init('OTP_TYPE_SMS', '4155550123')).errorCode).toBe('CONTACT_INVALID')
    expect((await init('OTP_TYPE_SMS', '+1415')).errorCode).toBe('CONTACT_INVALID')
    expect((await init('OTP_TYPE_EMAIL', 'not-an-email')).errorCode).toBe('CONTACT_INVALID')
    expect((await init('OTP_TYPE_EMAIL', 42)).errorCode).toBe('CONTACT_INVALID')
    expect((await init('OTP_TYPE_EMAIL', 'a@b.io', { otpLength: 4 })).details).toEqual({ field: 'otpLength' })
    expect((await init('OTP_TYPE_EMAIL', 'a@b.io', { expirationSeconds: 5 })).details).toEqual({
      field: 'expirationSeconds',
    })
    expect((await init('OTP_TYPE_X' as 'OTP_TYPE_SMS', 'a@b.io')).errorCode).toBe('ENUM_INVALID')
  })
})

describe('normalizeContact', () => {
  it('accepts E.164 numbers of real numbering plans only', () => {
    expect(normalizeContact('OTP_TYPE_SMS', '+447911123456')).toBe('+447911123456')
    expect(normalizeContact('OTP_TYPE_SMS', '+33612345678')).toBe('+33612345678')
    expect(() => normalizeContact('OTP_TYPE_SMS', '+4479111234567890')).toThrow(ApiError)
    expect(() => normalizeContact('OTP_TYPE_SMS', '+1 415 555 0123')).toThrow(ApiError)
    expect(() => normalizeContact('OTP_TYPE_SMS', '+0123456789')).toThrow(ApiError)
  })
})

describe('randomDigits', () => {
  it('draws every digit about equally often and skips biased bytes', () => {
    const counts = new Array(10).fill(0)
    for (const d of randomDigits(20_000)) counts[Number(d)]++
    for (const c of counts) expect(Math.abs(c - 2000)).toBeLessThan(250)
    // 250..255 would bias 0..5; they must be dropped.
    const bytes = [255, 250, 7, 251, 13]
    let i = 0
    expect(
      randomDigits(2, (b) => {
        for (let j = 0; j < b.length; j++) b[j] = bytes[i++ % bytes.length]!
        return b
      }),
    ).toBe('73')
  })
})

describe('renderTemplate', () => {
  it('fills known placeholders and leaves others', () => {
    expect(
      renderTemplate('{{code}}/{{ appName }}/{{expiresInMinutes}}/{{other}}', {
        code: '1',
        appName: 'A',
        expiresInMinutes: 5,
      }),
    ).toBe('1/A/5/{{other}}')
  })
})

describe('alphanumeric codes', () => {
  it('sends Crockford base-32 codes of the asked length and takes them back in either case, O as 0 and I or L as 1', async () => {
    const { engine, outbox } = setup()
    const { otpId } = await engine.init({
      organizationId: ORG,
      otpType: 'OTP_TYPE_EMAIL',
      contact: 'ada@example.com',
      otpLength: 8,
      alphabet: 'alphanumeric',
    })
    const code = outbox[0]!.code
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/)
    // Typed in lower case, with look-alikes: still the code.
    const typed = code.toLowerCase().replace(/0/g, 'o').replace(/1/g, 'l')
    const { verificationToken } = await engine.verify({
      organizationId: ORG,
      otpId,
      otpCode: typed,
      publicKey,
    })
    expect(verificationToken).toMatch(/^token:/)
  })

  it('draws every character about equally often, dropping the bytes that would bias it', () => {
    const counts = new Map<string, number>()
    for (const c of randomCode(32_000, CROCKFORD_ALPHABET)) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect([...counts.keys()].sort().join('')).toBe(CROCKFORD_ALPHABET)
    for (const c of counts.values()) expect(Math.abs(c - 1000)).toBeLessThan(150)
    // 256 is a multiple of 32: no byte is dropped, and 33 % 32 is "1".
    expect(randomCode(1, CROCKFORD_ALPHABET, (b) => b.fill(33))).toBe('1')
    // 36 symbols: bytes from 252 would favour the first four; they are drawn again.
    let i = 0
    expect(
      randomCode(1, '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', (b) => {
        for (let j = 0; j < b.length; j++) b[j] = [255, 252, 37][i++ % 3]!
        return b
      }),
    ).toBe('1')
  })
})
