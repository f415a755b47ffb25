// A guess at a one-time code is counted before the code is compared, in every state of the store
// of rate-limit entries. `verify` compared the code first and wrote the contact's guess bucket
// only for a wrong one; once the store was full (`[otp] max_rate_entries`), that write was refused
// (429 `maxRateEntries`) and rolled the record's `attempts` back with it, while a right code wrote
// nothing and passed. So an attacker who filled the store from many addresses guessed a victim's
// pending code without bound (no 5-per-code lock, no contact budget), told wrong from right by
// 429 against 200, and logged in to the account with `/v1/otp_login`. The MFA wing's contact
// codes (`latchkey_satisfy_mfa`) are checked by the same `verify`.
//
// Charged first, a guess by a contact with no bucket yet had to make one, which the full store
// refused: the RIGHT code of a code sent before the store filled got 429 `maxRateEntries` too, so
// filling the store stopped every OTP login, sign-up by code and e-mail/SMS MFA step. The guess
// bucket is now made when the code is sent (`init` already needs room) and kept while the code
// lives, so a guess only writes a row that is there: counted, compared, and a right code passes.
import { afterEach, describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  type Json,
  type Reply,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { proxyCall } from './proxySignUp.ts'

/** Rate-limit entries the service keeps at once: small, so a test fills it. */
const CAP = 40

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

async function harness(maxRateEntries = CAP): Promise<Harness> {
  const h = await createHarness({ clock: fakeClock(Date.now()), otpCaps: { maxRateEntries } })
  harnesses.push(h)
  return h
}

let n = 0
/** An auth-proxy call from `address` (a fresh one by default, so no address budget is spent). */
function call(h: Harness, path: string, body: unknown, address = `198.51.100.${(n++ % 250) + 1}`) {
  return proxyCall(h, path, body, address)
}

/** The code of `otpId`, or the newest code sent to `contact`, from the dev outbox. */
async function codeSent(h: Harness, contact: string, otpId?: string): Promise<string> {
  const res = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(contact)}`)
  const { messages } = (await res.json()) as { messages: { code: string; otpId: string }[] }
  const message = otpId === undefined ? messages[0] : messages.find((m) => m.otpId === otpId)
  if (!message) throw new Error(`no code sent to ${contact}`)
  return message.code
}

/** A wrong code for `code`, different for each `k`. */
const wrongFor = (code: string, k: number) => String((Number(code) + 1 + k) % 1_000_000).padStart(6, '0')

/** The attacker asks codes for contacts of its own from many addresses until the store is full. */
async function fillRateStore(h: Harness, other = h): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await call(
      i % 2 ? other : h,
      'otp_init',
      { otpType: 'OTP_TYPE_EMAIL', contact: `filler${i}@attacker.example` },
      `192.0.2.${(i % 250) + 1}`,
    )
    if (r.status === 429 && r.body.details?.limit === 'maxRateEntries') return topUp(h)
  }
  throw new Error('the store of rate-limit entries never filled')
}

/**
 * The last free entries, taken as the attacker's requests that each need one new entry would take
 * them (an `otp_init` that needs two is refused with one left): the store holds exactly `CAP`.
 */
async function topUp(h: Harness): Promise<void> {
  const now = h.clock.now()
  const held = await h.service.store.count('pluginRows', 'kind', 'otp-limit')
  await h.service.store.transaction(async (tx) => {
    for (let i = held; i < CAP; i++)
      await tx.put('pluginRows', {
        id: `otp-limit:attacker-${i}`,
        kind: 'otp-limit',
        data: { times: [now] },
        staleAt: now + 3_600_000,
        createdAt: now,
        updatedAt: now,
      })
  })
  expect(await h.service.store.count('pluginRows', 'kind', 'otp-limit')).toBe(CAP)
}

/** Empties the store of rate-limit entries, as its sweeps do once the filler's windows have passed. */
async function emptyRateStore(h: Harness): Promise<void> {
  const rows = await h.service.store.findBy('pluginRows', 'kind', 'otp-limit')
  await h.service.store.transaction(async (tx) => {
    for (const row of rows) await tx.delete('pluginRows', row.id)
  })
}

/** The victim's account, whose verified e-mail signs in with a code. */
async function victimAccount(h: Harness, email: string): Promise<string> {
  const owner = testKey()
  const created = await h.submit('create_sub_organization', {
    subOrganizationName: 'Victim',
    rootUsers: [
      {
        userName: 'v',
        userEmail: email,
        apiKeys: [owner.apiKey('k')],
        authenticators: [],
        oauthProviders: [],
      },
    ],
    rootQuorumThreshold: 1,
  })
  return resultOf('create_sub_organization', created).subOrganizationId
}

const answerOf = (r: { status: number; body: Json }) => ({
  status: r.status,
  errorCode: r.body.details?.errorCode,
  limit: r.body.details?.limit,
})

describe('OTP guesses while the store of rate-limit entries is full', () => {
  it('at a code sent before the store filled: each is counted, 5 lock the code, and the right one after them yields no token', async () => {
    const h = await harness()
    const victim = 'victim@example.com'
    await victimAccount(h, victim)
    const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: victim }, '203.0.113.1')
    expect(init.status, JSON.stringify(init.body)).toBe(200)
    const otpId = init.body.otpId as string
    const code = await codeSent(h, victim, otpId)

    await fillRateStore(h)
    const wrong: ReturnType<typeof answerOf>[] = []
    for (let k = 0; k < 30; k++)
      wrong.push(answerOf(await call(h, 'otp_verify', { otpId, otpCode: wrongFor(code, k) })))
    expect(wrong.slice(0, 5).map((a) => a.errorCode)).toEqual([
      'OTP_INVALID',
      'OTP_INVALID',
      'OTP_INVALID',
      'OTP_INVALID',
      'OTP_ATTEMPTS_EXCEEDED',
    ])
    expect(new Set(wrong.slice(5).map((a) => a.errorCode))).toEqual(new Set(['OTP_ATTEMPTS_EXCEEDED']))
    const right = await call(h, 'otp_verify', { otpId, otpCode: code })
    expect([right.status, right.body.details?.errorCode]).toEqual([429, 'OTP_ATTEMPTS_EXCEEDED'])
    expect(right.body.verificationToken).toBeUndefined()
  }, 120_000)

  it('at a code whose contact has no guess bucket (made before buckets were kept for codes): refused before the code is compared, the right code with the same 429, and never more than 5 are compared', async () => {
    const h = await harness()
    const victim = 'legacy@example.com'
    const victimOrg = await victimAccount(h, victim)
    const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: victim }, '203.0.113.1')
    expect(init.status, JSON.stringify(init.body)).toBe(200)
    const otpId = init.body.otpId as string
    const code = await codeSent(h, victim, otpId)
    // The code's record without the bucket kept for it, as one sent before this fix left it.
    await emptyRateStore(h)

    await fillRateStore(h)
    // 30 wrong guesses at the victim's code, then the right one: each is a 429 naming the full
    // store, the right one as well, so the answers tell nothing about the code.
    const wrong: ReturnType<typeof answerOf>[] = []
    for (let k = 0; k < 30; k++)
      wrong.push(answerOf(await call(h, 'otp_verify', { otpId, otpCode: wrongFor(code, k) })))
    const right = await call(h, 'otp_verify', { otpId, otpCode: code })
    expect(right.status, JSON.stringify(right.body)).toBe(429)
    expect(right.body.details?.limit).toBe('maxRateEntries')
    expect(right.body.message).toMatch(/rate-limit entries/)
    expect(new Set(wrong.map((a) => JSON.stringify(a)))).toEqual(new Set([JSON.stringify(answerOf(right))]))

    // Once the store has room again, the code is as it was sent: its 5 wrong guesses lock it, and
    // the right one after them yields no token.
    await emptyRateStore(h)
    const compared: ReturnType<typeof answerOf>[] = []
    for (let k = 0; k < 5; k++)
      compared.push(answerOf(await call(h, 'otp_verify', { otpId, otpCode: wrongFor(code, k) })))
    expect(compared.map((a) => a.errorCode)).toEqual([
      'OTP_INVALID',
      'OTP_INVALID',
      'OTP_INVALID',
      'OTP_INVALID',
      'OTP_ATTEMPTS_EXCEEDED',
    ])
    const late = await call(h, 'otp_verify', { otpId, otpCode: code })
    expect([late.status, late.body.details?.errorCode]).toEqual([429, 'OTP_ATTEMPTS_EXCEEDED'])
    // No token, so no login: the victim's organization is not the attacker's.
    expect(late.body.verificationToken).toBeUndefined()
    expect(victimOrg).toBeTruthy()
  }, 120_000)

  it("spend the contact's guess budget across its codes sent before the store filled: past 10 wrong ones, a third code's right one is refused uncompared", async () => {
    const h = await harness()
    const victim = 'budget@example.com'
    await victimAccount(h, victim)
    const sent: { otpId: string; code: string }[] = []
    for (let i = 0; i < 3; i++) {
      const r = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: victim }, '203.0.113.5')
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      sent.push({ otpId: r.body.otpId as string, code: await codeSent(h, victim, r.body.otpId as string) })
    }
    await fillRateStore(h)
    for (const { otpId, code } of sent.slice(0, 2))
      for (let k = 0; k < 5; k++) await call(h, 'otp_verify', { otpId, otpCode: wrongFor(code, k) })
    const [, , c] = sent
    const wrong = await call(h, 'otp_verify', { otpId: c!.otpId, otpCode: wrongFor(c!.code, 0) })
    const right = await call(h, 'otp_verify', { otpId: c!.otpId, otpCode: c!.code })
    for (const answer of [wrong, right])
      expect([answer.status, answer.body.details?.errorCode]).toEqual([429, 'OTP_RATE_LIMITED'])
    // The refused guesses were not compared: the third code counts no wrong guess and is pending.
    const record = await h.service.store.get('pluginRows', `otp:${c!.otpId}`)
    expect(record?.data).toMatchObject({ attempts: 0, status: 'pending' })
  }, 120_000)

  it('a code locked before the store filled stays locked', async () => {
    const h = await harness()
    const victim = 'locked@example.com'
    await victimAccount(h, victim)
    const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: victim }, '203.0.113.2')
    const otpId = init.body.otpId as string
    const code = await codeSent(h, victim, otpId)
    for (let k = 0; k < 5; k++) await call(h, 'otp_verify', { otpId, otpCode: wrongFor(code, k) })
    await fillRateStore(h)
    const right = await call(h, 'otp_verify', { otpId, otpCode: code })
    expect([right.status, right.body.details?.errorCode]).toEqual([429, 'OTP_ATTEMPTS_EXCEEDED'])
    await emptyRateStore(h)
    const after = await call(h, 'otp_verify', { otpId, otpCode: code })
    expect([after.status, after.body.details?.errorCode]).toEqual([429, 'OTP_ATTEMPTS_EXCEEDED'])
  }, 120_000)

  it('an MFA contact code (latchkey_satisfy_mfa) is not proven by its right code after more than 5 wrong ones', async () => {
    const h = await harness()
    const { code, satisfy, wallets } = await heldWallet(h, 'ada@example.com')
    const codeOf = (reply: Reply) => reply.body.errorCode ?? reply.body.details?.errorCode

    await fillRateStore(h)
    // 7 wrong codes within the user's attempt budget (5 at once, then one a minute) and the code's life.
    const answers: (string | undefined)[] = []
    for (let k = 0; k < 7; k++) {
      if (k >= 5) h.clock.advance(61_000)
      answers.push(codeOf(await satisfy(wrongFor(code, k))))
    }
    h.clock.advance(61_000)
    const right = await satisfy(code)
    expect(right.body.activity?.status).not.toBe('ACTIVITY_STATUS_COMPLETED')
    expect(right.status, JSON.stringify(right.body)).toBe(429)
    expect(await wallets()).toEqual([])
    expect(answers.filter((a) => a === 'OTP_INVALID').length).toBeLessThanOrEqual(4)
  }, 120_000)
})

/**
 * Ada's account, whose MFA policy holds a new wallet for an e-mail code: the held activity, with
 * the code sent for it, a way to satisfy it and one to list the organization's wallets.
 */
async function heldWallet(h: Harness, email: string) {
  const key: TestKey = testKey()
  const created = await h.submit('create_sub_organization', {
    subOrganizationName: 'Ada',
    rootUsers: [
      {
        userName: 'Ada',
        userEmail: email,
        apiKeys: [key.apiKey('k')],
        authenticators: [],
        oauthProviders: [],
      },
    ],
    rootQuorumThreshold: 1,
  })
  const { subOrganizationId: org, rootUserIds } = resultOf('create_sub_organization', created)
  const as = (path: Parameters<Harness['submit']>[0], params: unknown) => {
    h.clock.advance(1)
    return h.submit(path, params, { as: key, organizationId: org })
  }
  resultOf(
    'create_mfa_policy',
    await as('create_mfa_policy', {
      userId: rootUserIds[0],
      mfaPolicyName: 'wallets need a code',
      condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }],
      order: 0,
    }),
  )
  const held = await as('create_wallet', { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] })
  expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
  const fingerprint = held.body.activity.fingerprint as string
  resultOf(
    'latchkey_send_mfa_code',
    await as('latchkey_send_mfa_code', { fingerprint, type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }),
  )
  return {
    code: await codeSent(h, email),
    satisfy: (contactCode: string) => as('latchkey_satisfy_mfa', { fingerprint, contactCode }),
    wallets: async () =>
      (await h.query('list_wallets', { organizationId: org }, { as: key, organizationId: org })).body.wallets,
  }
}

describe('right codes while the store of rate-limit entries is full', () => {
  it('a user holding codes sent before the store filled verifies them (each, in turn) and signs in, even after sweeps ran', async () => {
    const h = await harness()
    const victim = 'holder@example.com'
    await victimAccount(h, victim)
    const sent: { otpId: string; code: string }[] = []
    for (let i = 0; i < 2; i++) {
      const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: victim }, '203.0.113.9')
      expect(init.status, JSON.stringify(init.body)).toBe(200)
      sent.push({
        otpId: init.body.otpId as string,
        code: await codeSent(h, victim, init.body.otpId as string),
      })
    }
    // 4.5 minutes on (the codes live 5), an attacker fills the store from addresses of its own
    // (its requests sweep what is stale); the user types the codes they got.
    h.clock.advance(270_000)
    await fillRateStore(h)
    for (const { otpId, code } of sent) {
      // Whatever entry a verification gave up, the attacker takes at once.
      await topUp(h)
      const right = await call(h, 'otp_verify', { otpId, otpCode: code })
      expect(answerOf(right)).toEqual({ status: 200, errorCode: undefined, limit: undefined })
      const login = await call(h, 'otp_login', {
        verificationToken: right.body.verificationToken,
        publicKey: testKey().publicKey,
      })
      expect(login.status, JSON.stringify(login.body)).toBe(200)
    }
  }, 120_000)

  it('an MFA contact code sent before the store filled completes the held activity', async () => {
    const h = await harness()
    const { code, satisfy, wallets } = await heldWallet(h, 'grace@example.com')
    await fillRateStore(h)
    const right = await satisfy(code)
    expect(right.status, JSON.stringify(right.body)).toBe(200)
    expect(right.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await wallets()).toHaveLength(1)
  }, 120_000)
})

describe('OTP codes while the store has room', () => {
  it("a user's right code on the first try signs them in, and right codes spend none of the contact's guess budget", async () => {
    const h = await harness()
    const user = 'user@example.com'
    await victimAccount(h, user)
    const initOf = async () => {
      const r = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: user }, '203.0.113.3')
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const otpId = r.body.otpId as string
      return { otpId, code: await codeSent(h, user, otpId) }
    }
    // First try: the right code gives a token that logs a key in.
    const first = await initOf()
    const ok = await call(h, 'otp_verify', { otpId: first.otpId, otpCode: first.code })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    const login = await call(h, 'otp_login', {
      verificationToken: ok.body.verificationToken,
      publicKey: testKey().publicKey,
    })
    expect(login.status, JSON.stringify(login.body)).toBe(200)

    // 9 wrong codes (the contact's budget is 10 per 10 minutes) over two codes, then two right
    // ones: each passes, as a right code is not a wrong guess.
    h.clock.advance(61_000)
    const a = await initOf()
    const b = await initOf()
    const c = await initOf()
    for (let k = 0; k < 5; k++) await call(h, 'otp_verify', { otpId: a.otpId, otpCode: wrongFor(a.code, k) })
    for (let k = 0; k < 4; k++) await call(h, 'otp_verify', { otpId: b.otpId, otpCode: wrongFor(b.code, k) })
    expect((await call(h, 'otp_verify', { otpId: b.otpId, otpCode: b.code })).status).toBe(200)
    expect((await call(h, 'otp_verify', { otpId: c.otpId, otpCode: c.code })).status).toBe(200)
  }, 120_000)
})

describe('OTP guesses while the store is full, over two instances on one PostgreSQL', () => {
  const postgres = usePostgres()

  it('guesses raced through both instances at a code sent before the store filled: at most 5 compared, then locked; another code of the contact passes on the other instance', async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'otp_guess_store_full', {
      otpCaps: { maxRateEntries: CAP },
    })
    harnesses.push(a, b)
    const victim = 'raced@example.com'
    await victimAccount(a, victim)
    const sent: { otpId: string; code: string }[] = []
    for (let i = 0; i < 2; i++) {
      const init = await call(a, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: victim }, '203.0.113.4')
      expect(init.status, JSON.stringify(init.body)).toBe(200)
      sent.push({
        otpId: init.body.otpId as string,
        code: await codeSent(a, victim, init.body.otpId as string),
      })
    }
    const [{ otpId, code }, other] = sent as [
      { otpId: string; code: string },
      { otpId: string; code: string },
    ]
    await fillRateStore(a, b)

    const raced = await Promise.all(
      Array.from({ length: 20 }, (_, k) =>
        call(k % 2 ? b : a, 'otp_verify', { otpId, otpCode: wrongFor(code, k) }),
      ),
    )
    // Every guess is answered (none passes, none is lost to the full store), at most 5 compared.
    expect(raced.every((w) => w.status !== 200 && w.body.details?.limit === undefined)).toBe(true)
    expect(raced.filter((w) => w.body.details?.errorCode === 'OTP_INVALID').length).toBeLessThanOrEqual(4)
    const late = await call(a, 'otp_verify', { otpId, otpCode: code })
    expect([late.status, late.body.details?.errorCode]).toEqual([429, 'OTP_ATTEMPTS_EXCEEDED'])

    // The contact's other code, sent on a, is verified on b while the store is still full.
    const right = await call(b, 'otp_verify', { otpId: other.otpId, otpCode: other.code })
    expect(answerOf(right)).toEqual({ status: 200, errorCode: undefined, limit: undefined })
  }, 600_000)
})
