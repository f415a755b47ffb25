// verify_otp's ACTIVITY_TYPE_VERIFY_OTP_V2 carries the one-time code inside `encryptedOtpBundle`
// (HPKE to the INIT_OTP_V3 target, which the service holds and drops only once the code
// verifies). Like `otpCode`, it is a bearer parameter: no read shows it. It was shown by
// get_activity to every reader of the organization (a parent organization's non-root user, a
// read-only session): a V2 verification refused before the code is compared (the contact's
// wrong-guess budget full, which anyone can fill) left a live bundle in a FAILED record, which a
// reader submitted again once the window freed, spending the end user's code.

import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { encryptOtpCodeToBundle } from '@turnkey/crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../src/testing/harness.ts'
import { latestCode } from '../../src/testing/latestCode.ts'
import { proxyCall } from './proxySignUp.ts'
import { announceActivities, announcedIds, supportUser } from './recordReaders.ts'

const MINUTE = 60_000
const V3 = { type: 'ACTIVITY_TYPE_INIT_OTP_V3' }
const V2 = { type: 'ACTIVITY_TYPE_VERIFY_OTP_V2' }
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

const wrong = (right: string) => (right === '000000' ? '111111' : '000000')

describe('verify_otp V2 keeps no live code bundle in its record', () => {
  it("a parent organization's non-root user reads a rate-limited V2 bundle from get_activity and spends the end user's code", async () => {
    const h = await createHarness()
    harnesses.push(h)
    await announceActivities(h)
    const staff = await supportUser(h)
    const contact = 'victim-v2@example.com'
    const init = async () => {
      const r = await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact, appName: 'Shop' }, V3)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return r.body.activity.result.initOtpResultV2 as { otpId: string; otpEncryptionTargetBundle: string }
    }
    // Fill the contact's wrong-guess budget (10 in 10 minutes), one guess early so that one
    // slot frees a little later (anyone can do this from the public proxy; here the back end).
    const early = await init()
    await h.submit('verify_otp', { otpId: early.otpId, otpCode: wrong(await latestCode(h.service, contact)) })
    h.clock.advance(9 * MINUTE + 30_000)
    for (let round = 0; round < 2; round++) {
      const { otpId } = await init()
      const code = await latestCode(h.service, contact)
      for (let i = 0; i < (round === 0 ? 5 : 4); i++) {
        h.clock.advance(100)
        const r = await h.submit('verify_otp', { otpId, otpCode: wrong(code) })
        expect(JSON.stringify(r.body)).not.toContain('OTP_RATE_LIMITED')
      }
    }
    h.clock.advance(5_000)
    // The end user's sign-in (the operator's back end relays the browser's V2 bundle): refused
    // for the budget, before its code is compared.
    const { otpId, otpEncryptionTargetBundle } = await init()
    const code = await latestCode(h.service, contact)
    const bound = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), true))
    const encryptedOtpBundle = await encryptOtpCodeToBundle(
      code,
      otpEncryptionTargetBundle,
      bound,
      h.service.dev.signerPublicKey,
    )
    const refused = await h.submit('verify_otp', { otpId, encryptedOtpBundle }, V2)
    expect(JSON.stringify(refused.body)).toContain('OTP_RATE_LIMITED')
    // The support user (non-root, no policy) finds verify_otp's records in the deliveries and reads them.
    const ids = await announcedIds(h, staff, (type) => type === 'ACTIVITY_TYPE_VERIFY_OTP_V2')
    expect(ids.length).toBeGreaterThan(0)
    let shown = ''
    for (const activityId of ids) {
      const record = await h.query('get_activity', { activityId }, staff)
      expect(record.status).toBe(200)
      const intent = Object.values(record.body.activity.intent)[0] as {
        otpId: string
        encryptedOtpBundle?: string
      }
      if (
        record.body.activity.status === 'ACTIVITY_STATUS_FAILED' &&
        intent.otpId === otpId &&
        intent.encryptedOtpBundle
      )
        shown = intent.encryptedOtpBundle
    }

    // Once the early guess leaves the window, they submit it again through the public proxy
    // (/v1/otp_verify_v2): the end user's code verifies for them, and the end user's retry fails.
    h.clock.advance(30_000)
    let replayed: number | undefined
    if (shown)
      replayed = (await proxyCall(h, 'otp_verify_v2', { otpId, encryptedOtpBundle: shown }, '192.0.2.67'))
        .status
    const victimRetry = await h.submit('verify_otp', { otpId, encryptedOtpBundle }, V2)
    expect({ shown, replayed, victimRetry: victimRetry.status }).toEqual({
      shown: '',
      replayed: undefined,
      victimRetry: 200,
    })
  }, 120_000)
})
