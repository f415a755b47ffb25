import { beforeEach, describe, expect, it } from 'vitest'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import {
  createSessionProfile,
  deleteSessionProfile,
  getSessionProfiles,
  updateSessionProfile,
} from './sessionProfiles.ts'

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
})
