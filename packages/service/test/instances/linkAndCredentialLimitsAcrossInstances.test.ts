/**
 * The caps on a user's OAuth providers and an organization's fiat on-ramp credentials
 * (domain/resourceLimits.ts) raced over two instances on one PostgreSQL database: filled to one
 * short of the cap, then six creates at once, three on each instance; exactly one is made.
 */
import { describe, expect, it } from 'vitest'
import { RESOURCE_LIMITS } from '../../src/domain/resourceLimits.ts'
import { fillRows, type TestKey } from '../../src/testing/harness.ts'
import { useTwoInstances } from '../support/twoInstances.ts'

const pair = useTwoInstances('link_credential_limits', { timeouts: { start: 120_000 } })

describe('per-user and per-organization caps across instances', () => {
  it('six create_oauth_providers at one short of the cap: one audience is linked', async () => {
    const { a, b } = pair
    const sub = await a.createSubOrganization()
    const as = { as: sub.keys[0] as TestKey, organizationId: sub.organizationId }
    const userId = sub.userIds[0]!
    const iss = 'https://accounts.google.com'
    await fillRows(a, 'oauthProviders', RESOURCE_LIMITS.oauthProvidersPerUser - 1, (i) => ({
      organizationId: sub.organizationId,
      userId,
      providerName: 'google',
      issuer: iss,
      audience: `filler-${i}`,
      subject: 'mallory',
    }))
    a.clock.advance(1)
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).submit(
          'create_oauth_providers',
          {
            userId,
            oauthProviders: [
              { providerName: 'google', oidcClaims: { iss, sub: 'mallory', aud: `race-${i}` } },
            ],
          },
          as,
        ),
      ),
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 412, 412, 412, 412, 412])
    expect(await a.service.store.count('oauthProviders', 'userId', userId)).toBe(
      RESOURCE_LIMITS.oauthProvidersPerUser,
    )
  }, 60_000)

  it('six create_fiat_on_ramp_credential at one short of the cap: one is stored', async () => {
    const { a, b } = pair
    const sub = await a.createSubOrganization()
    const as = { as: sub.keys[0] as TestKey, organizationId: sub.organizationId }
    await fillRows(a, 'fiatCredentials', RESOURCE_LIMITS.fiatCredentialsPerOrganization - 1, () => ({
      organizationId: sub.organizationId,
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
      publishableApiKey: 'p',
      sealedSecretApiKey: 's',
      sandboxMode: false,
    }))
    a.clock.advance(1)
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).submit(
          'create_fiat_on_ramp_credential',
          {
            onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
            publishableApiKey: `pk-${i}`,
            encryptedSecretApiKey: `sk-${i}`,
          },
          as,
        ),
      ),
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 412, 412, 412, 412, 412])
    expect(await a.service.store.count('fiatCredentials', 'organizationId', sub.organizationId)).toBe(
      RESOURCE_LIMITS.fiatCredentialsPerOrganization,
    )
  }, 60_000)
})
