// One one-time code across two service processes on one PostgreSQL: the right digits, sent to
// both instances at once, verify once. Each verification token is a login (or a sign-up) of its
// own, so a code that verified twice would be two. Black box: the CLI as child processes.
import { describe, expect, it } from 'vitest'
import { clientKey, codeOf, freshEmail, proxy, useTwoInstances } from '../instances/instances.ts'
import { errorOf } from '../support/RootClient.ts'

const two = useTwoInstances()

describe('one-time codes across instances', { timeout: 60_000 }, () => {
  it('the right code sent to both instances at once yields exactly one verification token', async () => {
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
    expect(replies.filter((reply) => reply.status >= 500).map((reply) => reply.body)).toEqual([])
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    // The others are told the code was used, as a second verification in one process is.
    for (const reply of replies.filter((r) => r.status !== 200))
      expect(errorOf(reply)).toEqual({ status: 400, errorCode: 'OTP_INVALID' })
  })
})
