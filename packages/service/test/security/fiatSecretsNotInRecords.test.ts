// create_fiat_on_ramp_credential carries the operator's on-ramp secret and private API keys
// (client-encrypted). They are sealed into the credential's row and never shown again; its
// activity record kept them, so every reader of the organization (a support tool's non-root
// user, a read-only session) read them from get_activity and the organization's ACTIVITY_UPDATES deliveries.
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { announceActivities, announcedActivities, supportUser } from './recordReaders.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

describe('create_fiat_on_ramp_credential keeps no secret in its record', () => {
  it('a non-root reader finds neither encrypted API key in get_activity or in the activity deliveries', async () => {
    const h = await createHarness()
    harnesses.push(h)
    await announceActivities(h)
    const staff = await supportUser(h)
    const secret = 'SECRET-API-KEY-CIPHERTEXT-0123456789abcdef'
    const privateKey = 'PRIVATE-API-KEY-CIPHERTEXT-fedcba9876543210'
    const created = await h.submit('create_fiat_on_ramp_credential', {
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
      projectId: 'project-1',
      publishableApiKey: 'pk_live_visible',
      encryptedSecretApiKey: secret,
      encryptedPrivateApiKey: privateKey,
      sandboxMode: true,
    })
    const { fiatOnRampCredentialId } = resultOf('create_fiat_on_ramp_credential', created)
    expect(fiatOnRampCredentialId).toBeTruthy()
    const activityId = created.body.activity.id as string
    const read = await h.query('get_activity', { organizationId: h.organizationId, activityId }, staff)
    expect(read.status).toBe(200)
    const shown = JSON.stringify(read.body)
    expect(shown).toContain('pk_live_visible')
    expect(shown).not.toContain(secret)
    expect(shown).not.toContain(privateKey)
    const { activities, listed } = await announcedActivities(h, staff)
    expect(activities.map((a) => a.activityId)).toContain(activityId)
    expect(listed).not.toContain(secret)
    expect(listed).not.toContain(privateKey)
  })
})
