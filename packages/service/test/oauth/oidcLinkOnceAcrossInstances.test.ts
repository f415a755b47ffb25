// "One token, one link" (the oidc-token-link marker) raced over two instances on PostgreSQL where no
// account claim orders the two links: a link by a user of the top-level organization itself (no
// claim is written there) against a link of the same token by a sub-organization's user. Exactly
// one commits; the other is refused (401 OIDC_TOKEN_REPLAYED or 409), never a 5xx.
import { describe, expect, it } from 'vitest'
import { signInState } from '../../src/signin/signInState.ts'
import { type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { useTwoInstances } from '../support/twoInstances.ts'

const pair = useTwoInstances('oidc_link_once')

const oidcToken = (h: Harness, sub: string) =>
  signInState(h.service.runtime).oidc.issue({
    sub,
    aud: 'client-web',
    nonce: 'n'.repeat(64),
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    idp_iss: 'https://accounts.google.com',
    org: h.organizationId,
  }).token

describe('one OIDC token, one link, across two instances', { timeout: 180_000 }, () => {
  it('a top-level user and a sub-organization user linking one token at once: one link', async () => {
    const { a, b } = pair
    // A top-level (operator) user with a key of its own.
    const staffKey = testKey()
    const created = resultOf(
      'create_users',
      await a.submit('create_users', {
        users: [
          {
            userName: 'staff',
            apiKeys: [staffKey.apiKey('s')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    const staffId = created.userIds[0] as string
    // Make the staff user able to act (a policy allowing create_oauth_providers is not needed: the
    // dev root user links for itself instead).
    const rootUsers = (await a.service.store.get('organizations', a.organizationId))!.rootUserIds
    const rootId = rootUsers[0]!
    void staffId
    const rounds = 4
    const results: string[][] = []
    for (let round = 0; round < rounds; round++) {
      const subject = `race-${round}-${crypto.randomUUID()}`
      const token = oidcToken(a, subject)
      const other = await b.createSubOrganization()
      a.clock.advance(1000)
      const replies = await Promise.all([
        a.submit('create_oauth_providers', {
          userId: rootId,
          oauthProviders: [{ providerName: 'OAUTH2_PROVIDER_GOOGLE', oidcToken: token }],
        }),
        b.submit(
          'create_oauth_providers',
          {
            userId: other.userIds[0],
            oauthProviders: [{ providerName: 'OAUTH2_PROVIDER_GOOGLE', oidcToken: token }],
          },
          { as: other.keys[0]!, organizationId: other.organizationId },
        ),
      ])
      results.push(replies.map((r) => `${r.status}:${r.body.activity?.status ?? r.body.details?.errorCode}`))
      const rows = await a.service.store.findBy('oauthProviders', 'subject', subject)
      expect(rows.length, JSON.stringify(results)).toBe(1)
      expect(
        replies.filter((r) => r.body.activity?.status === 'ACTIVITY_STATUS_COMPLETED'),
        JSON.stringify(results),
      ).toHaveLength(1)
    }
    expect(
      results.flat().filter((r) => r.startsWith('5')),
      JSON.stringify(results),
    ).toEqual([])
    console.log(JSON.stringify(results))
  })
})
