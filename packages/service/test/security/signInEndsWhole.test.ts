// A session key renews itself with `stamp_login` stamped by itself: the renewal is a new key, and
// whoever holds a copy of the session key can make one. The owner's logout deleted only the key
// the owner's browser held, so a thief who copied a session key and renewed it once kept a session
// of their own, renewing it for ever, after the owner signed out. Every renewal now belongs to the
// sign-in it renews (`SessionOrigin.signIn`), and ending a session ends its whole sign-in: the
// owner's logout, or the session revoked from another device. The kit's own refresh (the new key
// deletes the old one) still ends only the old key.
import { base32nopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { totp } from '../../src/mfa/totp.ts'
import {
  createHarness,
  type Harness,
  resultOf,
  type Stamper,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'
import { signedIn } from './inFlight.ts'
import { acts, deleteKeys, keyIdOf, renew, revokedReasons, subscribed, WEBHOOKS } from './signIns.ts'
import { twoDevices } from './twoDevices.ts'

/**
 * A thief's refresh loop on `h`, as the kit refreshes (renew, then give the old key back), from
 * `first` until `stop()` or a renewal is refused: counts each renewal in `progress.made`, and once
 * stopped answers the status of one more renewal (401 when the sign-in was ended).
 */
async function refreshLoop(
  h: Harness,
  first: Stamper,
  { organizationId, userId }: { organizationId: string; userId: string },
  progress: { made: number; stop: () => boolean },
): Promise<number> {
  const until = performance.now() + 60_000
  let current = first
  while (!progress.stop() && performance.now() < until) {
    const next = await renew(h, current, organizationId)
    if (next.status !== 200) return next.status
    progress.made++
    const oldId = (await h.service.store.findBy('apiKeys', 'userId', userId)).find(
      (k) => k.publicKey === (current as unknown as { publicKey: string }).publicKey,
    )?.id
    h.clock.advance(1)
    if (oldId)
      await h.submit('delete_api_keys', { userId, apiKeyIds: [oldId] }, { as: next.key!, organizationId })
    current = next.key!
  }
  return (await renew(h, current, organizationId)).status
}

describe('ending a session ends its whole sign-in', () => {
  it("the owner's logout ends a renewal a thief made with a copy of the session key", async () => {
    const h = await createHarness(WEBHOOKS as never)
    await subscribed(h)
    const { organizationId, userId, session: first } = await signedIn(h)
    // The thief renews the copied key: a session of its own, which renews itself again.
    const stolen = (await renew(h, first, organizationId)).key!
    const thief = (await renew(h, stolen, organizationId)).key!
    const thiefId = await keyIdOf(h, userId, thief)
    // The owner's kit refreshes too (the new key deletes the old one), and keeps signing.
    const owner = (await renew(h, first, organizationId)).key!
    expect((await deleteKeys(h, owner, organizationId, userId, [first])).status).toBe(200)
    // Giving the old key back ended that key only: the thief's renewal is another's to end.
    expect(await acts(h, owner, organizationId)).toBe(200)
    expect(await acts(h, thief, organizationId)).toBe(200)

    // The owner signs out: its own key, as the kit's logout deletes it.
    expect((await deleteKeys(h, owner, organizationId, userId, [owner])).status).toBe(200)
    expect(await acts(h, thief, organizationId)).toBe(401)
    expect((await renew(h, thief, organizationId)).status).toBe(401)
    expect(await acts(h, stolen, organizationId)).toBe(401)
    expect(await revokedReasons(h, thiefId)).toEqual(['logout'])
    // Nothing of the sign-in is left on the user; the durable key that opened it stays.
    const left = await h.service.store.findBy('apiKeys', 'userId', userId)
    expect(left.map((k) => k.expirationSeconds === undefined)).toEqual([true])
  })

  it('a session revoked from another device ends its renewals; that device and the other sign-ins stay', async () => {
    const h = await createHarness(WEBHOOKS as never)
    await subscribed(h)
    const { organizationId, userId, durable, session: phone } = await signedIn(h)
    const phoneRenewed = (await renew(h, phone, organizationId)).key!
    const phoneRenewedId = await keyIdOf(h, userId, phoneRenewed)
    // Another sign-in of the same user (a laptop), opened by the durable key.
    const laptop = (await renew(h, durable, organizationId)).key!
    const laptopRenewed = (await renew(h, laptop, organizationId)).key!

    // From the laptop, the owner revokes the phone's first session key (the one listed).
    expect((await deleteKeys(h, laptopRenewed, organizationId, userId, [phone])).status).toBe(200)
    expect(await acts(h, phoneRenewed, organizationId)).toBe(401)
    expect(await revokedReasons(h, phoneRenewedId)).toEqual(['deleted'])
    // The laptop's sign-in, its first key included, is not the phone's.
    expect(await acts(h, laptop, organizationId)).toBe(200)
    expect(await acts(h, laptopRenewed, organizationId)).toBe(200)
  })

  it("two tabs' refreshes of one session: each giving back the key it renewed leaves the other's new key", async () => {
    const h = await createHarness()
    const { organizationId, userId, session } = await signedIn(h)
    const tab1 = (await renew(h, session, organizationId)).key!
    const tab2 = (await renew(h, session, organizationId)).key!
    expect((await deleteKeys(h, tab1, organizationId, userId, [session])).status).toBe(200)
    expect(await acts(h, tab1, organizationId)).toBe(200)
    expect(await acts(h, tab2, organizationId)).toBe(200)
    // A renewal of a renewal gives back the key it came from, alone.
    const tab1Again = (await renew(h, tab1, organizationId)).key!
    expect((await deleteKeys(h, tab1Again, organizationId, userId, [tab1])).status).toBe(200)
    expect(await acts(h, tab1, organizationId)).toBe(401)
    expect(await acts(h, tab1Again, organizationId)).toBe(200)
    expect(await acts(h, tab2, organizationId)).toBe(200)
  })

  it("a thief deleting the owner's renewal with its own ends the whole sign-in, its own key too", async () => {
    const h = await createHarness()
    const { organizationId, userId, session: first } = await signedIn(h)
    const thief = (await renew(h, first, organizationId)).key!
    const owner = (await renew(h, first, organizationId)).key!
    expect((await deleteKeys(h, owner, organizationId, userId, [first])).status).toBe(200)
    // The owner's key is not the one the thief's renewal came from: no refresh gives it back.
    expect((await deleteKeys(h, thief, organizationId, userId, [owner])).status).toBe(200)
    expect(await acts(h, owner, organizationId)).toBe(401)
    expect(await acts(h, thief, organizationId)).toBe(401)
  })

  it('a thief giving back the key it renewed signs the owner out; a new sign-in of the owner ends the rest', async () => {
    const h = await createHarness()
    const { organizationId, userId, durable, session: first } = await signedIn(h)
    const thief = (await renew(h, first, organizationId)).key!
    // As the kit's refresh does: indistinguishable from it, so the owner's key ends alone.
    expect((await deleteKeys(h, thief, organizationId, userId, [first])).status).toBe(200)
    expect(await acts(h, first, organizationId)).toBe(401)
    expect(await acts(h, thief, organizationId)).toBe(200)
    // The owner signs in again (another sign-in) and revokes any key of the old one: all of it ends.
    const again = (await renew(h, durable, organizationId)).key!
    expect((await deleteKeys(h, again, organizationId, userId, [thief])).status).toBe(200)
    expect(await acts(h, thief, organizationId)).toBe(401)
    expect(await acts(h, again, organizationId)).toBe(200)
  })

  it("a session issued under a profile is a sign-in of its own: its logout leaves the issuer's; the issuer's ends it", async () => {
    const h = await createHarness()
    const { durable, organizationId, userId, session: owner } = await signedIn(h)
    h.clock.advance(1)
    const sessionProfileId = resultOf(
      'create_session_profile',
      await h.submit(
        'create_session_profile',
        { sessionProfileName: 'signs nothing', scope: 'false' },
        { as: durable, organizationId },
      ),
    ).sessionProfileId as string
    const issue = async (as: Stamper) => {
      const confined = testKey()
      h.clock.advance(1)
      resultOf(
        'stamp_login',
        await h.submit(
          'stamp_login',
          { publicKey: confined.publicKey, expirationSeconds: '3600', sessionProfileId },
          { as, organizationId },
        ),
      )
      return confined
    }
    const agent = await issue(owner)
    expect(await acts(h, agent, organizationId)).toBe(403)
    // The confined session signs itself out (let through whatever its scope): the owner's stays.
    expect((await deleteKeys(h, agent, organizationId, userId, [agent])).status).toBe(200)
    expect(await acts(h, agent, organizationId)).toBe(401)
    expect(await acts(h, owner, organizationId)).toBe(200)
    // One the owner's sign-in issued ends with its logout (a thief's copy of the session key could
    // otherwise mint itself one that outlives it); one a durable key issued is not of that sign-in.
    const issuedBySession = await issue(owner)
    const issuedByKey = await issue(durable)
    expect((await deleteKeys(h, owner, organizationId, userId, [owner])).status).toBe(200)
    expect(await acts(h, owner, organizationId)).toBe(401)
    expect(await acts(h, issuedBySession, organizationId)).toBe(401)
    expect(await acts(h, issuedByKey, organizationId)).toBe(403)
  })

  it("a thief's copy of a session key minting a confined session under a profile of its own: it ends with the owner's logout", async () => {
    const h = await createHarness()
    const { organizationId, userId, session: owner } = await signedIn(h)
    // With the copied key: a profile of any scope for 30 days, and a session under it.
    h.clock.advance(1)
    const sessionProfileId = resultOf(
      'create_session_profile',
      await h.submit(
        'create_session_profile',
        { sessionProfileName: 'mine', scope: 'true', expirationSeconds: String(30 * 24 * 3600) },
        { as: owner, organizationId },
      ),
    ).sessionProfileId as string
    const thief = testKey()
    h.clock.advance(1)
    resultOf(
      'stamp_login',
      await h.submit(
        'stamp_login',
        { publicKey: thief.publicKey, sessionProfileId },
        { as: owner, organizationId },
      ),
    )
    expect(await acts(h, thief, organizationId)).toBe(200)
    expect((await deleteKeys(h, owner, organizationId, userId, [owner])).status).toBe(200)
    expect(await acts(h, thief, organizationId)).toBe(401)
  })

  for (const withoutOrigin of [false, true])
    it(`the logout of a sign-up's first session key${withoutOrigin ? ' written without an origin (an older instance)' : ''} ends a renewal of it`, async () => {
      const h = await createHarness()
      const signUpKey = testKey()
      const { organizationId, userId } = await twoDevices(h, {
        name: 'Signed up',
        apiKeys: [{ ...signUpKey.apiKey('session'), expirationSeconds: '86400' }],
      })
      if (withoutOrigin)
        await h.service.store.transaction(async (tx) => {
          const key = (await tx.findBy('apiKeys', 'userId', userId)).find(
            (k) => k.publicKey === signUpKey.publicKey,
          )!
          const { origin: _, ...row } = key
          await tx.put('apiKeys', row)
        })
      const thief = (await renew(h, signUpKey, organizationId)).key!
      expect(await acts(h, thief, organizationId)).toBe(200)
      expect((await deleteKeys(h, signUpKey, organizationId, userId, [signUpKey])).status).toBe(200)
      expect(await acts(h, signUpKey, organizationId)).toBe(401)
      expect(await acts(h, thief, organizationId)).toBe(401)
    })

  it("a root user deleting another user's session key ends that user's sign-in", async () => {
    const h = await createHarness()
    const root = testKey()
    const member = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [root] })
    h.clock.advance(1)
    const memberId = resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'Member',
              apiKeys: [
                { apiKeyName: 'member', publicKey: member.publicKey, curveType: 'API_KEY_CURVE_P256' },
              ],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        { as: root, organizationId },
      ),
    ).userIds[0] as string
    expect(userIds).not.toContain(memberId)
    h.clock.advance(1)
    resultOf(
      'create_policy',
      await h.submit(
        'create_policy',
        {
          policyName: 'members sign in and create wallets',
          effect: 'EFFECT_ALLOW',
          condition: "activity.type in ['ACTIVITY_TYPE_STAMP_LOGIN', 'ACTIVITY_TYPE_CREATE_WALLET']",
          consensus: `approvers.any(user, user.id == '${memberId}')`,
          notes: '',
        },
        { as: root, organizationId },
      ),
    )
    const session = (await renew(h, member, organizationId)).key!
    const renewed = (await renew(h, session, organizationId)).key!
    expect(await acts(h, renewed, organizationId)).toBe(200)
    expect((await deleteKeys(h, root, organizationId, memberId, [session])).status).toBe(200)
    expect(await acts(h, renewed, organizationId)).toBe(401)
    expect((await renew(h, renewed, organizationId)).status).toBe(401)
    // The member's own key, which opened the sign-in, is not part of it.
    expect(await acts(h, member, organizationId)).toBe(200)
  })
})

describe('on two instances (PostgreSQL)', () => {
  const postgres = usePostgres()

  it('a thief renewing on B as the owner signs out on A keeps no session', async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'sign_in_ends_whole')
    const { organizationId, userId, session } = await signedIn(a)
    const sessionId = await keyIdOf(a, userId, session)
    const logout = async () => {
      a.clock.advance(1)
      const reply = await a.submit(
        'delete_api_keys',
        { userId, apiKeyIds: [sessionId] },
        { as: session, organizationId },
      )
      if (reply.status !== 200) expect(reply.body).toEqual({})
    }
    // The thief renews a chain on B, each renewal stamped by the last, until it is refused; the
    // owner signs out on A once the chain is under way.
    let current: Stamper = session
    const made: Stamper[] = []
    const chain = (async () => {
      for (let i = 0; i < 200; i++) {
        const next = await renew(b, current, organizationId)
        if (next.status !== 200) return next.status
        made.push(next.key!)
        current = next.key!
      }
      return 200
    })()
    while (made.length < 3) await new Promise((resolve) => setTimeout(resolve, 2))
    await logout()
    // The renewal after the logout finds its stamping key gone, whichever committed first.
    expect(await chain).toBe(401)
    for (const key of [session, ...made]) {
      expect(await acts(b, key, organizationId)).toBe(401)
      expect(await acts(a, key, organizationId)).toBe(401)
    }
    const live = (await a.service.store.findBy('apiKeys', 'userId', userId)).filter(
      (k) => k.expirationSeconds !== undefined,
    )
    expect(live).toEqual([])
  })
  it('a removal of a durable key an MFA policy held, let run by the second factor while a renewal loop runs on B, completes and ends the loop (10 owners)', async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'held_key_removal_race')
    const race = async () => {
      const wallet = testKey()
      const { organizationId, userIds } = await a.createSubOrganization({ keys: [wallet] })
      const userId = userIds[0]!
      const submit = (as: TestKey, path: Parameters<Harness['submit']>[0], params: unknown) => {
        a.clock.advance(1)
        return a.submit(path, params, { as, organizationId })
      }
      // A recovery key beside the wallet key: the user keeps a way in once the wallet key is gone.
      const recovery = testKey()
      resultOf(
        'create_api_keys',
        await submit(wallet, 'create_api_keys', { userId, apiKeys: [recovery.apiKey('recovery')] }),
      )
      const enrolled = resultOf(
        'latchkey_create_totp_factor',
        await submit(wallet, 'latchkey_create_totp_factor', { userId }),
      )
      const secret = base32nopad.decode(enrolled.secret)
      resultOf(
        'latchkey_confirm_totp_factor',
        await submit(wallet, 'latchkey_confirm_totp_factor', {
          userId,
          factorId: enrolled.factorId,
          code: totp(secret, a.clock.now()),
        }),
      )
      resultOf(
        'create_mfa_policy',
        await submit(wallet, 'create_mfa_policy', {
          userId,
          mfaPolicyName: 'exports need a code',
          condition: "activity.action == 'EXPORT'",
          requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
          order: 0,
        }),
      )
      // The owner's session (opened by the wallet key) and the thief's copy of it.
      const session = (await renew(a, wallet, organizationId)).key!
      const walletKeyId = (await a.service.store.findBy('apiKeys', 'userId', userId)).find(
        (k) => k.publicKey === wallet.publicKey,
      )!.id
      // The owner, from the recovery key, unlinks the wallet key whose sign-in the thief copied.
      const removal = await submit(recovery, 'delete_api_keys', { userId, apiKeyIds: [walletKeyId] })
      expect(removal.body.activity?.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')

      // The thief refreshes on B as the kit does (renew, then give the old key back).
      let satisfied = false
      const progress = { made: 0, stop: () => satisfied }
      // Once the removal is in, the thief's next renewal finds the wallet key gone.
      const chain = refreshLoop(b, session, { organizationId, userId }, progress)
      while (progress.made < 3) await new Promise((resolve) => setTimeout(resolve, 2))
      a.clock.advance(30_000)
      const done = await a.submit(
        'latchkey_satisfy_mfa',
        { fingerprint: removal.body.activity.fingerprint, totpCode: totp(secret, a.clock.now()) },
        { as: recovery, organizationId },
      )
      satisfied = true
      const chainEnd = await chain
      return { status: done.status, activity: done.body.activity?.status, chainEnd }
    }
    const outcomes = []
    for (let i = 0; i < 10; i++) outcomes.push(await race())
    // Each removal completes (never 503 STORAGE_UNAVAILABLE) and the thief's next renewal is refused.
    expect(outcomes.map((o) => [o.status, o.activity, o.chainEnd])).toEqual(
      outcomes.map(() => [200, 'ACTIVITY_STATUS_COMPLETED', 401]),
    )
    await a.service.close()
    await b.service.close()
  }, 300_000)
  it("removing a lost phone's passkey while a thief refreshes copies of its session on B completes (never 503) and ends them (30 owners)", async () => {
    const [a, b] = await twoInstances(postgres.cluster, 'passkey_removal_race')
    const race = async () => {
      const { phone, laptop, organizationId, userId, phoneId } = await twoDevices(a)
      // The phone's session (opened by its passkey), which the thief copied.
      const session = (await renew(a, phone, organizationId)).key!
      let removed = false
      const progress = { made: 0, stop: () => removed }
      // The thief refreshes several copies at once (each chain as the kit refreshes one tab).
      const loop = (first: TestKey) => refreshLoop(b, first, { organizationId, userId }, progress)
      const copies = [session]
      for (let i = 0; i < 3; i++) copies.push((await renew(b, session, organizationId)).key!)
      const chains = Promise.all(copies.map(loop))
      const chain = chains.then((ends) => (ends.every((end) => end === 401) ? 401 : Math.max(...ends)))
      const waitUntil = performance.now() + 10_000
      while (progress.made < 3 && performance.now() < waitUntil)
        await new Promise((resolve) => setTimeout(resolve, 2))
      expect(progress.made, 'the thief renews').toBeGreaterThanOrEqual(3)
      a.clock.advance(1)
      const removal = await a.submit(
        'delete_authenticators',
        { userId, authenticatorIds: [phoneId] },
        { as: laptop, organizationId },
      )
      removed = true
      const chainEnd = await chain
      return { status: removal.status, code: removal.body.details?.errorCode ?? removal.body.code, chainEnd }
    }
    const outcomes = []
    for (let i = 0; i < 30; i++) outcomes.push(await race())
    // Each removal completes and the thief's next renewal is refused.
    expect(outcomes.map((o) => [o.status, o.chainEnd])).toEqual(outcomes.map(() => [200, 401]))
    await a.service.close()
    await b.service.close()
  }, 600_000)
})
