import { CAPTCHA_TOKEN_HEADER, decodeJwtClaims } from '@latchkey/protocol'
import { latestCode } from '@latchkey/service/testing'
import { describe, expect, it } from 'vitest'
import { createClientFixture } from '../../test/fixtures.ts'
import { completeOtpSignIn } from './completeOtpSignIn.ts'
import { startOtpSignIn } from './startOtpSignIn.ts'

/** The client's proxy calls, as the service received them. */
function recorded(fx: Awaited<ReturnType<typeof createClientFixture>>) {
  const calls: { path: string; body: Record<string, unknown> }[] = []
  const fetch = fx.harness.service.fetch
  const client = fx.reload({
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url)
      if (url.pathname.startsWith('/v1/'))
        calls.push({ path: url.pathname.slice(4), body: JSON.parse(String(init?.body ?? '{}')) })
      return fetch(input as Request, init)
    },
  })
  return { client, calls }
}

describe('OTP sign-in on the wire', () => {
  it("sends a solved CAPTCHA's token as X-Captcha-Token, and no header without one", async () => {
    const fx = await createClientFixture()
    const headers: (string | null)[] = []
    const fetch = fx.harness.service.fetch
    const client = fx.reload({
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        headers.push(new Headers(init?.headers).get(CAPTCHA_TOKEN_HEADER))
        return fetch(input as Request, init)
      },
    })
    const contact = `captcha+${crypto.randomUUID().slice(0, 6)}@example.com`
    await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact, captchaToken: 'solved' })
    await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact })
    expect(headers).toEqual(['solved', null])
  })

  it('sends the code encrypted to the signed target and signs the published consents', async () => {
    const fx = await createClientFixture()
    const { client, calls } = recorded(fx)
    const contact = `wire+${crypto.randomUUID().slice(0, 6)}@example.com`
    const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact })
    const code = await latestCode(fx.harness.service, contact)
    const { session } = await completeOtpSignIn(client, {
      otpId: started.otpId,
      otpType: 'OTP_TYPE_EMAIL',
      contact,
      otpCode: code,
    })
    // (wallet_kit_config: the session lifetime, fetched once per client.)
    expect(calls.map((c) => c.path)).toEqual([
      'otp_init_v2',
      'otp_verify_v2',
      'account',
      'signup',
      'wallet_kit_config',
      'otp_login',
    ])
    const verify = calls[1]!.body
    expect(Object.keys(verify).sort()).toEqual(['encryptedOtpBundle', 'otpId'])
    expect(JSON.stringify(verify)).not.toContain(code)
    const token = calls[3]!.body.verificationToken as string
    const { id, public_key } = decodeJwtClaims<{ id: string; public_key: string }>(token)
    expect(public_key).toBe(session.publicKey)
    const signup = calls[3]!.body.clientSignature as { message: string; publicKey: string }
    expect(JSON.parse(signup.message)).toEqual({
      signupV2: { apiKeys: [], authenticators: [], oauthProviders: [], email: contact },
      tokenId: id,
      type: 'USAGE_TYPE_SIGNUP',
    })
    const login = calls[5]!.body.clientSignature as { message: string; publicKey: string; scheme: string }
    expect(login.scheme).toBe('CLIENT_SIGNATURE_SCHEME_API_P256')
    expect(JSON.parse(login.message)).toEqual({
      login: { publicKey: session.publicKey },
      tokenId: id,
      type: 'USAGE_TYPE_LOGIN',
    })
  })

  it('refuses a target bundle signed by another key than the trusted one', async () => {
    const fx = await createClientFixture()
    const other = await createClientFixture()
    const contact = `spoof+${crypto.randomUUID().slice(0, 6)}@example.com`
    const started = await startOtpSignIn(fx.client, { otpType: 'OTP_TYPE_EMAIL', contact })
    const foreign = await startOtpSignIn(other.client, { otpType: 'OTP_TYPE_EMAIL', contact })
    await expect(
      completeOtpSignIn(fx.client, {
        ...started,
        otpEncryptionTargetBundle: foreign.otpEncryptionTargetBundle,
        otpCode: await latestCode(fx.harness.service, contact),
      }),
    ).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID' })
  })
})
