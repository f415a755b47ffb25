// Linking an OAuth identity (`create_oauth_providers`, what the kit's `linkOAuth` and
// <LinkedLogins/>'s "Link Google" submit) across two service instances on one PostgreSQL: an
// identity belongs to one account of the parent organization, so six accounts linking the same one
// at once, half through each instance, leave it with exactly one of them; the rest are refused
// naming the field, and no second row exists. Another user of the holder's own sub-organization is
// refused too; once the holder unlinks it, another account may link it.
import { describe, expect, it } from 'vitest'
import { signInState } from '../../src/signin/signInState.ts'
import { type Harness, type Reply, resultOf } from '../../src/testing/harness.ts'
import { useTwoInstances } from '../support/twoInstances.ts'

const pair = useTwoInstances('oauth_link_race')

/** An OIDC token as `oauth2_authenticate` issues it, each with its own `jti` (the exchange is tested in signin/oauth). */
const oidcToken = (h: Harness, sub: string) =>
  signInState(h.service.runtime).oidc.issue({
    sub,
    aud: 'client-web',
    nonce: 'n'.repeat(64),
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    idp_iss: 'https://accounts.google.com',
    org: h.organizationId,
    email: `${sub}@example.com`,
  }).token

async function account(h: Harness, users = 1) {
  const sub = await h.createSubOrganization({ users })
  return sub.userIds.map((userId, index) => ({
    userId,
    as: { as: sub.keys[index]!, organizationId: sub.organizationId },
  }))
}
type Account = Awaited<ReturnType<typeof account>>[number]

const link = (h: Harness, who: Account, token: string) =>
  h.submit(
    'create_oauth_providers',
    { userId: who.userId, oauthProviders: [{ providerName: 'OAUTH2_PROVIDER_GOOGLE', oidcToken: token }] },
    who.as,
  )

const errorOf = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})
const TAKEN = { status: 409, errorCode: 'ALREADY_EXISTS', field: 'parameters.oauthProviders[0].oidcToken' }

const holders = async (sub: string) =>
  (await pair.a.service.store.findBy('oauthProviders', 'subject', sub)).map((row) => row.userId)

describe('linking one OAuth identity across two instances on PostgreSQL', () => {
  it('six accounts linking it at once, half through each instance: exactly one holds it, the rest are refused naming the field', async () => {
    const { a, b } = pair
    const sub = `contested-${crypto.randomUUID()}`
    const accounts = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => (await account(i % 2 ? b : a))[0]!),
    )
    const replies = await Promise.all(
      accounts.map((who, i) => link(i % 2 ? b : a, who, oidcToken(i % 2 ? b : a, sub))),
    )
    expect(replies.filter((reply) => reply.status >= 500).map((reply) => reply.body)).toEqual([])
    const won = replies.flatMap((reply, i) => (reply.status === 200 ? [accounts[i]!] : []))
    expect(won).toHaveLength(1)
    for (const reply of replies.filter((r) => r.status !== 200)) expect(errorOf(reply)).toEqual(TAKEN)
    expect(await holders(sub)).toEqual([won[0]!.userId])

    // Unlinked by its holder on one instance, another account may link it on the other.
    const winner = won[0]!
    const [providerId] = resultOf('create_oauth_providers', replies[accounts.indexOf(winner)]!).providerIds
    a.clock.advance(1000)
    const removed = await a.submit(
      'delete_oauth_providers',
      { userId: winner.userId, providerIds: [providerId] },
      winner.as,
    )
    expect(removed.status, JSON.stringify(removed.body)).toBe(200)
    const next = accounts.find((who) => who !== winner)!
    const relinked = await link(b, next, oidcToken(b, sub))
    expect(relinked.status, JSON.stringify(relinked.body)).toBe(200)
    expect(await holders(sub)).toEqual([next.userId])
  })

  it("another user of the holder's own sub-organization is refused, on either instance", async () => {
    const { a, b } = pair
    const sub = `colleague-${crypto.randomUUID()}`
    const [holder, colleague] = await account(a, 2)
    expect((await link(a, holder!, oidcToken(a, sub))).status).toBe(200)
    a.clock.advance(1000)
    expect(errorOf(await link(b, colleague!, oidcToken(b, sub)))).toEqual(TAKEN)
    expect(errorOf(await link(a, colleague!, oidcToken(a, sub)))).toEqual(TAKEN)
    expect(await holders(sub)).toEqual([holder!.userId])
  })
})
