import { beforeEach, describe, expect, it } from 'vitest'
import { addSessionFromKey } from '../../session/sessions.ts'
import { apiKeyStamper } from '../../stampers/apiKeyStamper.ts'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { query } from '../../transport/activity.ts'
import { logout } from '../auth/logout.ts'
import {
  createSessionProfile,
  deleteSessionProfile,
  getSessionProfiles,
  updateSessionProfile,
} from './sessionProfiles.ts'
import { stampLogin } from './stampLogin.ts'

describe('session profile actions against the local service', () => {
  let fx: ClientFixture
  beforeEach(async () => {
    fx = await createClientFixture()
    await fx.signUpDirect()
  })

  it('creates, lists, updates and deletes a profile; a bad scope is refused naming the field', async () => {
    const { sessionProfileId } = await createSessionProfile(fx.client, {
      sessionProfileName: 'agent',
      scope: "activity.action == 'SIGN'",
      expirationSeconds: '600',
    })
    expect((await getSessionProfiles(fx.client)).sessionProfiles).toEqual([
      expect.objectContaining({ sessionProfileId, sessionProfileName: 'agent', expirationSeconds: '600' }),
    ])
    await updateSessionProfile(fx.client, { sessionProfileId, scope: 'false' })
    expect((await getSessionProfiles(fx.client)).sessionProfiles[0]?.scope).toBe('false')
    await expect(
      createSessionProfile(fx.client, { sessionProfileName: 'broken', scope: "activity.action == 'SIGN" }),
    ).rejects.toMatchObject({ field: 'parameters.scope' })
    await deleteSessionProfile(fx.client, { sessionProfileId })
    expect((await getSessionProfiles(fx.client)).sessionProfiles).toEqual([])
  })

  it('a session logged in under a profile signs out: its key is revoked on the service, not only here', async () => {
    const { organizationId, userIds } = await fx.signUpDirect()
    const { sessionProfileId } = await createSessionProfile(fx.client, {
      sessionProfileName: 'agent',
      scope: "activity.action == 'SIGN'",
    })
    const key = await fx.client.keyStore.create({ scope: fx.client.config.organizationId })
    await stampLogin(fx.client, { publicKey: key.publicKey, sessionProfileId, expirationSeconds: '600' })
    const agent = addSessionFromKey(fx.client, {
      publicKey: key.publicKey,
      userId: userIds[0]!,
      organizationId,
      lifetimeSeconds: 600,
      method: 'api-key',
    })
    const whoami = () =>
      query(fx.client, 'whoami', { organizationId }, { stamper: apiKeyStamper(key) }).then(
        (who) => who.userId,
        () => null,
      )
    expect(await whoami()).toBe(userIds[0])
    expect(await logout(fx.client, { sessionId: agent.id })).toEqual({ sessionId: agent.id, revoked: true })
    expect(await whoami()).toBe(null)
  })
})
