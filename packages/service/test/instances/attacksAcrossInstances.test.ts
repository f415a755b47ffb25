// The "only once" rules and limits (a token spent once, per-contact budgets, a stamp applied once)
// across two service processes on one PostgreSQL: a second instance must not be a second chance.
// Black box: the CLI as child processes, HTTP on 127.0.0.1.
import { describe, expect, it } from 'vitest'
import { errorOf, type Reply } from '../support/RootClient.ts'
import {
  clientKey,
  codeOf,
  freshEmail,
  type Instance,
  otpLogin,
  otpSignup,
  proxy,
  useTwoInstances,
  verifiedToken,
} from './instances.ts'

const two = useTwoInstances()

const no5xx = (replies: Reply[]) =>
  expect(replies.filter((reply) => reply.status >= 500).map((reply) => [reply.status, reply.body])).toEqual(
    [],
  )

/**
 * An account signed up through B for a fresh e-mail, and its token: as in the kit's OTP sign-in,
 * the token that signed up logs in once (sign-up and login spend it separately).
 */
async function newAccount(label: string) {
  const email = freshEmail(label)
  const proof = await verifiedToken(two.a, two.b, two.both, email)
  const signup = await otpSignup(two.b, email, proof)
  expect(signup.status, JSON.stringify(signup.body)).toBe(200)
  return proof
}

describe('only-once rules across instances', { timeout: 60_000 }, () => {
  it('a login verification token redeemed on A is refused on B', async () => {
    const proof = await newAccount('login-twice')
    const first = await otpLogin(two.a, proof)
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(typeof first.body.session).toBe('string')
    const second = await otpLogin(two.b, proof)
    expect(errorOf(second)).toEqual({ status: 401, errorCode: 'VERIFICATION_TOKEN_INVALID' })
  })

  it('one login token redeemed concurrently on both instances gives exactly one session', async () => {
    const proof = await newAccount('login-race')
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => otpLogin(two.both[i % 2]!, proof)))
    no5xx(replies)
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of replies.filter((r) => r.status !== 200))
      expect(errorOf(reply)).toEqual({ status: 401, errorCode: 'VERIFICATION_TOKEN_INVALID' })
  })

  it('one e-mail signed up with two different tokens on two instances at once makes one account', async () => {
    const email = freshEmail('two-tokens')
    const first = await verifiedToken(two.a, two.a, two.both, email)
    const second = await verifiedToken(two.b, two.b, two.both, email)
    const replies = await Promise.all([otpSignup(two.a, email, first), otpSignup(two.b, email, second)])
    no5xx(replies)
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409])
    expect(await two.root.accountsWithEmail(two.a, email)).toHaveLength(1)
  })

  it('the per-contact otp_init budget holds when the requests alternate between instances', async () => {
    /** Codes sent to one new contact, the i-th through `order(i)`, until one is refused. */
    const sendUntilRefused = async (order: (i: number) => Instance) => {
      const email = freshEmail('sends')
      for (let sent = 0; sent < 12; sent++) {
        const reply = await proxy(order(sent), 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
        if (reply.status !== 200) return { sent, refusal: errorOf(reply), body: reply.body }
      }
      return { sent: 12, refusal: undefined, body: undefined }
    }
    const single = await sendUntilRefused(() => two.a)
    const alternating = await sendUntilRefused((i) => two.both[i % 2]!)
    expect(single.refusal).toEqual({ status: 429, errorCode: 'OTP_RATE_LIMITED' })
    expect(single.sent).toBeGreaterThan(0)
    // With per-process budgets, alternating would send twice as many.
    expect(alternating.sent).toBe(single.sent)
    expect(alternating.refusal).toEqual({ status: 429, errorCode: 'OTP_RATE_LIMITED' })
    expect(alternating.body.details.retryAfterSeconds).toBeGreaterThan(0)
  })

  it('the right code sent to both instances at once yields exactly one verification token', async () => {
    // Each verification token is a login (or a sign-up) of its own: a code that verified twice
    // would be two.
    const email = freshEmail('verify-race')
    const init = await proxy(two.a, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
    expect(init.status, JSON.stringify(init.body)).toBe(200)
    const code = await codeOf(two.both, email, init.body.otpId)
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        proxy(two.both[i % 2]!, 'otp_verify', {
          otpId: init.body.otpId,
          otpCode: code,
          publicKey: clientKey().publicKey,
        }),
      ),
    )
    no5xx(replies)
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    // The others are told the code was used, as a second verification in one process is.
    for (const reply of replies.filter((r) => r.status !== 200))
      expect(errorOf(reply)).toEqual({ status: 400, errorCode: 'OTP_INVALID' })
  })

  it("wrong guesses are budgeted per contact across codes and instances: a fresh code's right answer is refused", async () => {
    const email = freshEmail('guesses')
    /** A new code for `email` sent by `sender`, with wrong guesses on `guesser` until it stops judging them. */
    const exhaust = async (sender: Instance, guesser: Instance) => {
      const init = await proxy(sender, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
      expect(init.status, JSON.stringify(init.body)).toBe(200)
      const code = await codeOf(two.both, email, init.body.otpId)
      const wrong = code === '000000' ? '000001' : '000000'
      let judged = 0
      for (let i = 0; i < 20; i++) {
        const reply = await proxy(guesser, 'otp_verify', { otpId: init.body.otpId, otpCode: wrong })
        expect(reply.status).toBeLessThan(500)
        if (errorOf(reply).errorCode !== 'OTP_INVALID') return { judged, last: errorOf(reply) }
        judged++
      }
      throw new Error('the service kept judging wrong codes for one OTP')
    }
    const first = await exhaust(two.a, two.a)
    const second = await exhaust(two.b, two.b)
    // The contact's budget is spent (2 codes × the per-code attempts); a third code, sent and
    // answered through either instance, is refused even with the right digits.
    // (Three codes a minute may be sent to one contact, so the third is sent.)
    const init = await proxy(two.a, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
    expect(init.status, JSON.stringify(init.body)).toBe(200)
    const code = await codeOf(two.both, email, init.body.otpId)
    for (const instance of two.both)
      expect(errorOf(await proxy(instance, 'otp_verify', { otpId: init.body.otpId, otpCode: code }))).toEqual(
        {
          status: 429,
          errorCode: 'OTP_RATE_LIMITED',
        },
      )
    expect(first.judged).toBeGreaterThan(0)
    expect(second.judged).toBe(first.judged)
  })

  it('a stamped /dev/settings/update applied on A is refused when replayed on B, and a concurrent pair applies once', async () => {
    const update = two.root.prepareSettings({ sessionExpirationSeconds: '3600' })
    const applied = await two.root.send(two.a, update)
    expect(applied.status, JSON.stringify(applied.body)).toBe(200)
    const replay = await two.root.send(two.b, update)
    expect(errorOf(replay)).toEqual({ status: 401, errorCode: 'STAMP_INVALID' })

    const race = two.root.prepareSettings({ sessionExpirationSeconds: '1800' })
    const replies = await Promise.all([
      two.root.send(two.a, race),
      two.root.send(two.b, race),
      two.root.send(two.a, race),
      two.root.send(two.b, race),
    ])
    no5xx(replies)
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of replies.filter((r) => r.status !== 200))
      expect(errorOf(reply)).toEqual({ status: 401, errorCode: 'STAMP_INVALID' })
  })
})
