import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, testKey } from '../testing/harness.ts'

/** A non-root user of the dev (parent) organization with an API key and no policy. */
async function nonRootUser(h: Harness) {
  const key = testKey()
  const reply = await h.submit('create_users', {
    users: [
      {
        userName: 'Back end',
        apiKeys: [key.apiKey('server')],
        authenticators: [],
        oauthProviders: [],
        userTags: [],
      },
    ],
  })
  resultOf('create_users', reply)
  return key
}

describe('who the policies do not govern', () => {
  it('a non-root user cannot create sub-organizations or send sign-in codes without a policy', async () => {
    const h = await createHarness()
    const key = await nonRootUser(h)
    const subOrganization = await h.submit(
      'create_sub_organization',
      {
        subOrganizationName: 'Not mine to make',
        rootUsers: [
          { userName: 'x', apiKeys: [testKey().apiKey('k')], authenticators: [], oauthProviders: [] },
        ],
        rootQuorumThreshold: 1,
      },
      { as: key },
    )
    expect(subOrganization).toMatchObject({
      status: 403,
      body: { details: { errorCode: 'PERMISSION_DENIED', outcome: 'OUTCOME_DENY_IMPLICIT' } },
    })
    const code = await h.submit(
      'init_otp',
      { otpType: 'OTP_TYPE_EMAIL', contact: 'victim@example.com' },
      { as: key },
    )
    expect(code).toMatchObject({ status: 403, body: { details: { outcome: 'OUTCOME_DENY_IMPLICIT' } } })
  })

  it('the auth proxy still signs people up, and a non-root user still revokes its own key', async () => {
    const h = await createHarness()
    const configId = h.service.dev.authProxyConfigId!
    const signup = await h.post(
      '/v1/signup',
      JSON.stringify({
        apiKeys: [testKey('SIGNATURE_SCHEME_TK_API_SECP256K1').apiKey('wallet')],
      }),
      { [PROXY_CONFIG_HEADER]: configId },
    )
    expect(signup.status).toBe(200)
    const key = await nonRootUser(h)
    const { userId } = (await h.query('whoami', {}, { as: key })).body
    const { apiKeys } = (await h.query('get_api_keys', { userId }, { as: key })).body
    const revoked = await h.submit(
      'delete_api_keys',
      { userId, apiKeyIds: [apiKeys[0].apiKeyId] },
      { as: key },
    )
    expect(revoked.status).toBe(200)
  })
})
