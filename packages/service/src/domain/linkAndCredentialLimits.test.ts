import { describe, expect, it } from 'vitest'
import { signInState } from '../signin/signInState.ts'
import { createHarness, fillRows, type Harness, resultOf, type TestKey } from '../testing/harness.ts'
import { RESOURCE_LIMITS, type ResourceLimit } from './resourceLimits.ts'

/**
 * OAuth identities a user links (every audience of one identity a row, read whole by each
 * anonymous lookup of its subject) and an organization's fiat on-ramp credentials (~23.5 KB a
 * row) are capped as users, keys and passkeys are: `create_oauth_providers` with `oidcClaims`
 * added 10 audiences a call, and `create_fiat_on_ramp_credential` a row a call, without a count.
 */

const refusal = (limit: ResourceLimit, field: string) => ({
  status: 412,
  body: {
    code: 9,
    message: expect.stringContaining(`at most ${RESOURCE_LIMITS[limit]} (${limit})`),
    details: { errorCode: 'RESOURCE_LIMIT_REACHED', field, limit, max: RESOURCE_LIMITS[limit] },
  },
})

const ISSUER = 'https://accounts.google.com'

/** An OIDC token of the service's sign-in plugin, as `oauth2_authenticate` hands one out. */
function oidcToken(h: Harness, sub: string) {
  return signInState(h.service.runtime).oidc.issue({
    sub,
    aud: 'client-web',
    nonce: 'n'.repeat(64),
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    idp_iss: ISSUER,
    org: h.organizationId,
    email: `${sub}@example.com`,
  }).token
}

const claims = (sub: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    providerName: 'google',
    oidcClaims: { iss: ISSUER, sub, aud: `client-${from + i}` },
  }))

describe('OAuth providers a user links are capped', () => {
  it('oidcClaims: new audiences of a linked identity stop at the cap, per user', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ users: 2 })
    const as = { as: sub.keys[0] as TestKey, organizationId: sub.organizationId }
    const [userId, other] = sub.userIds as [string, string]
    resultOf(
      'create_oauth_providers',
      await h.submit(
        'create_oauth_providers',
        { userId, oauthProviders: [{ providerName: 'google', oidcToken: oidcToken(h, 'mallory') }] },
        as,
      ),
    )
    const [first] = await h.service.store.findBy('oauthProviders', 'userId', userId)
    // The linked identity and 97 more audiences of it: 2 short of the cap.
    await fillRows(h, 'oauthProviders', RESOURCE_LIMITS.oauthProvidersPerUser - 3, (i) => ({
      organizationId: sub.organizationId,
      userId,
      providerName: 'google',
      issuer: first!.issuer,
      audience: `filler-${i}`,
      subject: first!.subject,
    }))
    h.clock.advance(1)
    const three = await h.submit(
      'create_oauth_providers',
      { userId, oauthProviders: claims('mallory', 0, 3) },
      as,
    )
    expect({ status: three.status, body: three.body }).toEqual(
      refusal('oauthProvidersPerUser', 'parameters.oauthProviders'),
    )
    expect(await h.service.store.count('oauthProviders', 'userId', userId)).toBe(
      RESOURCE_LIMITS.oauthProvidersPerUser - 2,
    )
    h.clock.advance(1)
    resultOf(
      'create_oauth_providers',
      await h.submit('create_oauth_providers', { userId, oauthProviders: claims('mallory', 0, 2) }, as),
    )
    h.clock.advance(1)
    const over = await h.submit(
      'create_oauth_providers',
      { userId, oauthProviders: claims('mallory', 2, 1) },
      as,
    )
    expect({ status: over.status, body: over.body }).toEqual(
      refusal('oauthProvidersPerUser', 'parameters.oauthProviders'),
    )
    expect(await h.service.store.count('oauthProviders', 'userId', userId)).toBe(
      RESOURCE_LIMITS.oauthProvidersPerUser,
    )
    // The cap is the user's: another user of the same organization links their own.
    h.clock.advance(1)
    resultOf(
      'create_oauth_providers',
      await h.submit(
        'create_oauth_providers',
        { userId: other, oauthProviders: [{ providerName: 'google', oidcToken: oidcToken(h, 'alice') }] },
        as,
      ),
    )
    h.clock.advance(1)
    resultOf(
      'create_oauth_providers',
      await h.submit('create_oauth_providers', { userId: other, oauthProviders: claims('alice', 0, 10) }, as),
    )
  })

  it('oidcToken: a new identity is not linked to a user at the cap', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const as = { as: sub.keys[0] as TestKey, organizationId: sub.organizationId }
    const userId = sub.userIds[0]!
    resultOf(
      'create_oauth_providers',
      await h.submit(
        'create_oauth_providers',
        { userId, oauthProviders: [{ providerName: 'google', oidcToken: oidcToken(h, 'mallory') }] },
        as,
      ),
    )
    const [first] = await h.service.store.findBy('oauthProviders', 'userId', userId)
    await fillRows(h, 'oauthProviders', RESOURCE_LIMITS.oauthProvidersPerUser - 1, (i) => ({
      organizationId: sub.organizationId,
      userId,
      providerName: 'google',
      issuer: first!.issuer,
      audience: `filler-${i}`,
      subject: first!.subject,
    }))
    h.clock.advance(1)
    const over = await h.submit(
      'create_oauth_providers',
      { userId, oauthProviders: [{ providerName: 'google', oidcToken: oidcToken(h, 'mallory-2') }] },
      as,
    )
    expect({ status: over.status, body: over.body }).toEqual(
      refusal('oauthProvidersPerUser', 'parameters.oauthProviders'),
    )
    expect(await h.service.store.count('oauthProviders', 'userId', userId)).toBe(
      RESOURCE_LIMITS.oauthProvidersPerUser,
    )
    // Control: with one row unlinked, the same token links.
    const linked = await h.service.store.findBy('oauthProviders', 'userId', userId)
    h.clock.advance(1)
    resultOf(
      'delete_oauth_providers',
      await h.submit('delete_oauth_providers', { userId, providerIds: [linked.at(-1)!.id] }, as),
    )
    h.clock.advance(1)
    resultOf(
      'create_oauth_providers',
      await h.submit(
        'create_oauth_providers',
        { userId, oauthProviders: [{ providerName: 'google', oidcToken: oidcToken(h, 'mallory-3') }] },
        as,
      ),
    )
  })
})

describe('fiat on-ramp credentials an organization stores are capped', () => {
  const params = {
    onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
    projectId: 'p'.repeat(256),
    publishableApiKey: 'k'.repeat(1024),
    encryptedSecretApiKey: 's'.repeat(8192),
    encryptedPrivateApiKey: 'v'.repeat(8192),
  }

  it('the one past the cap is refused and writes nothing; another organization is not full', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const as = { as: sub.keys[0] as TestKey, organizationId: sub.organizationId }
    for (let i = 0; i < RESOURCE_LIMITS.fiatCredentialsPerOrganization; i++) {
      h.clock.advance(1)
      resultOf('create_fiat_on_ramp_credential', await h.submit('create_fiat_on_ramp_credential', params, as))
    }
    h.clock.advance(1)
    const over = await h.submit('create_fiat_on_ramp_credential', params, as)
    expect({ status: over.status, body: over.body }).toEqual(
      refusal('fiatCredentialsPerOrganization', 'parameters.onrampProvider'),
    )
    expect(await h.service.store.count('fiatCredentials', 'organizationId', sub.organizationId)).toBe(
      RESOURCE_LIMITS.fiatCredentialsPerOrganization,
    )
    resultOf('create_fiat_on_ramp_credential', await h.submit('create_fiat_on_ramp_credential', params))
  })

  it('two creates at one short of the cap, at once: one is made', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const as = { as: sub.keys[0] as TestKey, organizationId: sub.organizationId }
    await fillRows(h, 'fiatCredentials', RESOURCE_LIMITS.fiatCredentialsPerOrganization - 1, () => ({
      organizationId: sub.organizationId,
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
      publishableApiKey: 'p',
      sealedSecretApiKey: 's',
      sandboxMode: false,
    }))
    h.clock.advance(1)
    const replies = await Promise.all([
      h.submit('create_fiat_on_ramp_credential', params, as),
      h.submit('create_fiat_on_ramp_credential', { ...params, sandboxMode: true }, as),
    ])
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 412])
    expect(await h.service.store.count('fiatCredentials', 'organizationId', sub.organizationId)).toBe(
      RESOURCE_LIMITS.fiatCredentialsPerOrganization,
    )
  })
})
