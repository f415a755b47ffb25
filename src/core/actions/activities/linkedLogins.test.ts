import { softPasskey } from '@latchkey/service/testing'
import { beforeEach, describe, expect, it } from 'vitest'
import { MfaRequiredError } from '../../errors.ts'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { submit } from '../../transport/activity.ts'
import { getLinkedLogins } from '../queries/getLinkedLogins.ts'
import { createAuthenticators } from './createAuthenticators.ts'
import { createMfaPolicy } from './createMfaPolicy.ts'
import { unlinkLogin } from './unlinkLogin.ts'

describe('linked logins against the local service', () => {
  let fx: ClientFixture
  let userId: string
  beforeEach(async () => {
    fx = await createClientFixture()
    ;[userId] = (await fx.signUpDirect()).userIds as [string]
    await submit(fx.client, 'update_user_email', { userId, userEmail: 'lena@example.com' })
  })

  it('lists every durable way in, unlinks them, and the service refuses the last one', async () => {
    const { logins } = await getLinkedLogins(fx.client)
    expect(logins.map(({ kind, label }) => [kind, label])).toEqual([
      ['email', 'lena@example.com'],
      ['apiKey', 'session 1'],
      ['apiKey', 'recovery key'],
    ])
    await unlinkLogin(fx.client, { login: logins[0]! })
    await unlinkLogin(fx.client, { login: logins[2]! })
    const left = (await getLinkedLogins(fx.client)).logins
    expect(left.map((login) => login.label)).toEqual(['session 1'])
    // The only root user's last credential: refused in words, naming the field.
    await expect(unlinkLogin(fx.client, { login: left[0]! })).rejects.toMatchObject({
      code: 'FIELD_INVALID',
      message: expect.stringMatching(/without any credential/),
    })
    expect((await getLinkedLogins(fx.client)).logins).toHaveLength(1)
  })

  it('waits for the second factor when an MFA policy is on the user', async () => {
    // A passkey first: a policy only a passkey proves is refused to a user without one.
    await createAuthenticators(fx.client, { userId, authenticators: [softPasskey().register()] })
    await createMfaPolicy(fx.client, {
      mfaPolicyName: 'passkey for anything',
      condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] }],
      order: 0,
    })
    const email = (await getLinkedLogins(fx.client)).logins[0]!
    await expect(unlinkLogin(fx.client, { login: email })).rejects.toBeInstanceOf(MfaRequiredError)
    expect((await getLinkedLogins(fx.client)).logins[0]).toMatchObject({ kind: 'email' })
  })
})
