// A passkey registered by someone who does not hold it routes none of its holder's sign-ins. With a
// "none" attestation nothing in a registration is signed, so a passkey's credential id and public
// key (in a record of a pending or failed registration, in list_users, recoverable from one
// assertion) are all it takes to register it. signInWithPasskey stamps stamp_login naming the
// PARENT organization, and the service once took whichever sub-organization held the credential id:
// whoever registered a person's passkey first captured that person's passkey sign-ins. A passkey
// anyone but the operator registered is now `unproven` (AuthenticatorRow.unproven) and routes a
// sign-in naming the parent only once it stamped a request naming its own organization, or when its
// account is one only it gets into (a passkey sign-up's). Unless its registration is the first
// record that ever showed the passkey: a copy can only be made of a passkey the service showed, so
// that one is its holder's (a published client's passkey sign-up, which never proves the passkey
// naming the account, signs in from the parent later however much the account was used).
import { decodeJwtClaims, PROXY_CONFIG_HEADER, type SessionClaims } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import {
  createHarness,
  type Harness,
  resultOf,
  type SoftPasskey,
  softPasskey,
  testKey,
} from '../../src/testing/harness.ts'
import { proxySignUpWithPasskey, showPasskey } from './proxySignUp.ts'
import { supportUser } from './recordReaders.ts'

/** The first object in `value` holding an `attestationObject` (an `authenticators[]` item's attestation's parent). */
function findAuthenticator(value: unknown): Record<string, unknown> | undefined {
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>
    const attestation = record.attestation as Record<string, unknown> | undefined
    if (attestation && typeof attestation.attestationObject === 'string') return record
    for (const child of Object.values(record)) {
      const found = findAuthenticator(child)
      if (found) return found
    }
  }
  return undefined
}

describe("a person's passkey registered by someone else", () => {
  it("routes none of the person's passkey sign-ins into the registrant's account", async () => {
    const h = await createHarness()
    const support = await supportUser(h)

    // The person's account: two root users, quorum 2 (a shared account).
    const [personKey, coRootKey] = [testKey(), testKey()]
    const person = await h.createSubOrganization({
      name: 'person',
      keys: [personKey, coRootKey],
      threshold: 2,
    })
    const at = { as: personKey, organizationId: person.organizationId }

    // The person adds a passkey; it waits for the co-root's vote.
    const passkey = softPasskey()
    h.clock.advance(1)
    const pending = await h.submit(
      'create_authenticators',
      { userId: person.userIds[0], authenticators: [passkey.register(undefined, 'Phone')] },
      at,
    )
    expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')

    // A support user of the operator's organization reads the waiting registration.
    const record = await h.query(
      'get_activity',
      { activityId: pending.body.activity.id, organizationId: person.organizationId },
      { as: support.as, organizationId: person.organizationId },
    )
    expect(record.status).toBe(200)
    const copied = findAuthenticator(record.body.activity.intent)
    expect(copied).toBeDefined()

    // An attacker (an end user with an account of their own, or that support user's own account)
    // registers the copied registration on their own user. They never held the passkey's key.
    const attacker = await h.createSubOrganization({ name: 'attacker' })
    h.clock.advance(1)
    const squat = await h.submit(
      'create_authenticators',
      { userId: attacker.userIds[0], authenticators: [{ ...copied, authenticatorName: 'mine' }] },
      { as: attacker.keys[0]!, organizationId: attacker.organizationId },
    )

    // The person's passkey sign-in (signInWithPasskey: stamp_login naming the parent).
    h.clock.advance(1)
    const login = await h.submit(
      'stamp_login',
      { publicKey: testKey().publicKey },
      { as: passkey, organizationId: h.organizationId },
    )
    const landedIn =
      login.status === 200
        ? decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login).session).organization_id
        : null
    // Secure: the copy is refused (no proof the registrant holds the passkey), or at least routes
    // no sign-in there.
    expect(landedIn, `the copy was answered ${squat.status}; the sign-in landed in ${landedIn}`).not.toBe(
      attacker.organizationId,
    )
  })

  it('signs in from the parent once the passkey proved itself in its own account, or where only it gets in', async () => {
    const h = await createHarness()
    const signIn = async (passkey: ReturnType<typeof softPasskey>) => {
      h.clock.advance(1)
      const login = await h.submit(
        'stamp_login',
        { publicKey: testKey().publicKey },
        { as: passkey, organizationId: h.organizationId },
      )
      return login.status === 200
        ? decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login).session).organization_id
        : JSON.stringify(login.body).match(/PUBLIC_KEY_NOT_FOUND|[A-Z_]{6,}/)?.[0]
    }

    // The operator registers it (create_sub_organization by its root user, beside a key of the
    // user's): it signs in from the parent.
    const byOperator = softPasskey()
    h.clock.advance(1)
    const made = await h.submit('create_sub_organization', {
      subOrganizationName: 'operator-made',
      rootUsers: [
        {
          userName: 'user',
          apiKeys: [testKey().apiKey('key')],
          authenticators: [byOperator.register(undefined, 'Laptop')],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
    })
    const operatorMade = resultOf('create_sub_organization', made).subOrganizationId
    expect(await signIn(byOperator)).toBe(operatorMade)

    // A user adds a passkey no record showed before beside their own key: the first registration of
    // it, so its holder's: it signs in from the parent at once.
    const own = await h.createSubOrganization({ name: 'own' })
    const first = softPasskey()
    h.clock.advance(1)
    const added = await h.submit(
      'create_authenticators',
      { userId: own.userIds[0], authenticators: [first.register(undefined, 'Laptop')] },
      { as: own.keys[0]!, organizationId: own.organizationId },
    )
    expect(added.status).toBe(200)
    expect(await signIn(first)).toBe(own.organizationId)

    // A user adds a passkey a failed registration showed before: a possible copy, refused from the
    // parent until it signs a request naming its account, then it signs in from the parent.
    const passkey = softPasskey()
    await showPasskey(h, passkey)
    h.clock.advance(1)
    const mine = await h.submit(
      'create_authenticators',
      { userId: own.userIds[0], authenticators: [passkey.register(undefined, 'Phone')] },
      { as: own.keys[0]!, organizationId: own.organizationId },
    )
    expect(mine.status).toBe(200)
    expect(await signIn(passkey)).toBe('PUBLIC_KEY_NOT_FOUND')
    h.clock.advance(1)
    const proof = await h.query(
      'whoami',
      { organizationId: own.organizationId },
      { as: passkey, organizationId: own.organizationId },
    )
    expect(proof.status).toBe(200)
    expect(await signIn(passkey)).toBe(own.organizationId)

    // A published client's passkey sign-up of a passkey no record showed (made on the device in
    // that ceremony): it signs in from the parent, the session registered beside it stays, and so
    // it does once that session used the account (it signed something, say).
    const fresh = softPasskey()
    const freshUp = await signUpWithPasskey(h, fresh)
    h.clock.advance(1)
    const created = await h.submit(
      'create_wallet',
      { walletName: 'w', accounts: [] },
      { as: freshUp.session, organizationId: freshUp.organizationId },
    )
    expect(created.status).toBe(200)
    expect(await signIn(fresh)).toBe(freshUp.organizationId)
    h.clock.advance(1)
    const kept = await h.query(
      'whoami',
      { organizationId: freshUp.organizationId },
      { as: freshUp.session, organizationId: freshUp.organizationId },
    )
    expect(kept.status).toBe(200)

    // A passkey sign-up's account of a passkey a record showed before (the passkey and the session
    // key registered beside it, as a published client makes it) is one only the passkey gets into
    // while nobody used it: its sign-in lands there, whoever submitted the sign-up, and ends the
    // session registered beside it.
    const signUp = softPasskey()
    await showPasskey(h, signUp)
    const signedUp = await signUpWithPasskey(h, signUp)
    expect(await signIn(signUp)).toBe(signedUp.organizationId)
    h.clock.advance(1)
    const beside = await h.query(
      'whoami',
      { organizationId: signedUp.organizationId },
      { as: signedUp.session, organizationId: signedUp.organizationId },
    )
    expect(beside.status).toBe(401)

    // Once the sign-up's session acted there, the account is no longer one only the passkey gets
    // into: an unproven passkey's sign-in naming the parent is refused.
    const used = softPasskey()
    await showPasskey(h, used)
    const usedUp = await signUpWithPasskey(h, used)
    h.clock.advance(1)
    const wallet = await h.submit(
      'create_wallet',
      { walletName: 'w', accounts: [] },
      { as: usedUp.session, organizationId: usedUp.organizationId },
    )
    expect(wallet.status).toBe(200)
    expect(await signIn(used)).toBe('PUBLIC_KEY_NOT_FOUND')
  })
})

describe("the account lookups by a passkey's credential id", () => {
  // A client that looks the account up first and stamps naming the organization found (the
  // published clients' passkey login, the kit's signInWithPasskey) proves whatever copy the lookup
  // names and signs in there: the lookups find only accounts a sign-in from the parent would land in.
  const lookups = (h: Harness) => ({
    /** `list_suborgs` by credential id, as the operator's back end asks it. */
    async listed(passkey: SoftPasskey): Promise<string[]> {
      const reply = await h.query('list_suborgs', {
        organizationId: h.organizationId,
        filterType: 'CREDENTIAL_ID',
        filterValue: passkey.credentialId,
      })
      expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      return reply.body.organizationIds as string[]
    },
    /** The auth proxy's anonymous `/v1/account`, as a published client asks it. */
    async account(passkey: SoftPasskey): Promise<string | null> {
      const reply = await h.service.app.request('/v1/account', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
          Origin: 'http://app.test',
        },
        body: JSON.stringify({ filterType: 'CREDENTIAL_ID', filterValue: passkey.credentialId }),
      })
      const body = (await reply.json()) as { organizationId: string | null }
      expect(reply.status, JSON.stringify(body)).toBe(200)
      return body.organizationId
    },
    /** A published client's passkey login: the lookup, then stamp_login naming what it found (else the parent). */
    async login(passkey: SoftPasskey): Promise<string | null> {
      const found = await this.account(passkey)
      h.clock.advance(1)
      const reply = await h.submit(
        'stamp_login',
        { publicKey: testKey().publicKey },
        { as: passkey, organizationId: found ?? h.organizationId },
      )
      return reply.status === 200
        ? decodeJwtClaims<SessionClaims>(resultOf('stamp_login', reply).session).organization_id
        : null
    },
  })

  /** `passkey` registered (as copied: the same registration) on an account of the attacker's own. */
  async function squat(h: Harness, passkey: SoftPasskey): Promise<string> {
    const attacker = await h.createSubOrganization({ name: 'attacker' })
    h.clock.advance(1)
    const reply = await h.submit(
      'create_authenticators',
      {
        userId: attacker.userIds[0],
        authenticators: [{ ...passkey.register(undefined, 'Phone'), authenticatorName: 'mine' }],
      },
      { as: attacker.keys[0]!, organizationId: attacker.organizationId },
    )
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    return attacker.organizationId
  }

  it('finds no copy someone else registered, so a lookup-then-login lands in no account of theirs', async () => {
    const h = await createHarness()
    const find = lookups(h)
    // The person's passkey is registered nowhere yet (its registration waits for a vote, or failed):
    // the attacker's copy is the only row of its credential id.
    const passkey = softPasskey()
    await showPasskey(h, passkey)
    const attacker = await squat(h, passkey)
    expect(await find.listed(passkey)).toEqual([])
    expect(await find.account(passkey)).toBeNull()
    expect(await find.login(passkey)).not.toBe(attacker)
  })

  it("finds the holder's account once the passkey proved itself there, and lands a lookup-then-login there", async () => {
    const h = await createHarness()
    const find = lookups(h)
    const own = await h.createSubOrganization({ name: 'own' })
    const passkey = softPasskey()
    await showPasskey(h, passkey)
    h.clock.advance(1)
    const added = await h.submit(
      'create_authenticators',
      { userId: own.userIds[0], authenticators: [passkey.register(undefined, 'Phone')] },
      { as: own.keys[0]!, organizationId: own.organizationId },
    )
    expect(added.status).toBe(200)
    // Added by the user beside their key after a failed registration showed it: not found until it
    // signed a request naming its account, as a sign-in from the parent is refused until then.
    expect(await find.listed(passkey)).toEqual([])
    h.clock.advance(1)
    const proof = await h.query(
      'whoami',
      { organizationId: own.organizationId },
      { as: passkey, organizationId: own.organizationId },
    )
    expect(proof.status).toBe(200)
    expect(await find.listed(passkey)).toEqual([own.organizationId])
    expect(await find.account(passkey)).toBe(own.organizationId)
    expect(await find.login(passkey)).toBe(own.organizationId)
  })

  it('finds an account only the passkey gets into as a sign-in from the parent lands there, and not once used', async () => {
    const h = await createHarness()
    const find = lookups(h)
    const passkey = softPasskey()
    await showPasskey(h, passkey)
    const signedUp = await signUpWithPasskey(h, passkey)
    expect(await find.listed(passkey)).toEqual([signedUp.organizationId])
    expect(await find.account(passkey)).toBe(signedUp.organizationId)
    expect(await find.login(passkey)).toBe(signedUp.organizationId)
    // Whoever signed it up (with a copy of the passkey, and a session key of their own) keeps no way
    // in once the holder's lookup-then-login proved the passkey there by naming the account.
    h.clock.advance(1)
    const after = await h.query(
      'whoami',
      { organizationId: signedUp.organizationId },
      { as: signedUp.session, organizationId: signedUp.organizationId },
    )
    expect(after.status).toBe(401)

    // Once the sign-up's session acted there, neither the lookup nor a sign-in from the parent finds it.
    const used = softPasskey()
    await showPasskey(h, used)
    const usedUp = await signUpWithPasskey(h, used)
    h.clock.advance(1)
    const wallet = await h.submit(
      'create_wallet',
      { walletName: 'w', accounts: [] },
      { as: usedUp.session, organizationId: usedUp.organizationId },
    )
    expect(wallet.status).toBe(200)
    expect(await find.listed(used)).toEqual([])
    expect(await find.account(used)).toBeNull()
    expect(await find.login(used)).toBeNull()
  })
})

/** A passkey sign-up through the auth proxy, as signUpWithPasskey makes it: the passkey and a session key. */
async function signUpWithPasskey(h: Harness, passkey: ReturnType<typeof softPasskey>) {
  const { organizationId, sessions } = await proxySignUpWithPasskey(h, passkey)
  return { organizationId, session: sessions[0]! }
}
