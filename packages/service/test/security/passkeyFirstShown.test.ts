// The first registration that ever shows a passkey is its holder's, so it signs in from the parent
// however much its account was used. A published client's passkey sign-up (`@turnkey/core` 2.8.1
// `signUpWithPasskey`: the passkey and a 60-second key beside it through `/v1/signup_v2`, then a
// session from that key's `stamp_login` naming the new account) never stamps with the passkey
// naming its account, so the passkey stayed unproven, and once the session did anything there its
// `loginWithPasskey` (stamp_login naming the parent) was refused for good: 401 PUBLIC_KEY_NOT_FOUND.
// A copy can only be made of a passkey the service showed (kernel/passkeySightings.ts), so a
// registration after any record showed it, a removed passkey planted in another account included,
// stays unproven and routes nothing once that account is used.
import { decodeJwtClaims, PROXY_CONFIG_HEADER, type SessionClaims } from '@latchkey/protocol'
import { bytesToHex } from '@noble/hashes/utils.js'
import { decodeAttestationObject, isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers'
import { describe, expect, it } from 'vitest'
import {
  createHarness,
  type Harness,
  resultOf,
  type SoftPasskey,
  softPasskey,
  testKey,
} from '../../src/testing/harness.ts'
import { b64url } from '../../src/testing/webAuthnEncoding.ts'

/**
 * `registration` (a passkey's, "none" attestation) under another credential id, `fresh`, with the
 * same public key: what someone who read the public key can register under an id of their making.
 * Answers it with the public key (COSE, hex).
 */
function underAnotherId(registration: ReturnType<SoftPasskey['register']>, fresh: Uint8Array) {
  const authData = decodeAttestationObject(
    isoBase64URL.toBuffer(registration.attestation.attestationObject),
  ).get('authData')
  const idLength = (authData[53]! << 8) | authData[54]!
  const cose = authData.slice(55 + idLength)
  const next = new Uint8Array([...authData.slice(0, 53), 0, fresh.length, ...fresh, ...cose])
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', next],
    ]) as never,
  )
  return {
    registration: {
      ...registration,
      attestation: {
        ...registration.attestation,
        credentialId: b64url(fresh),
        attestationObject: b64url(attestationObject),
      },
    },
    publicKey: bytesToHex(cose),
  }
}

/**
 * `signInWithPasskey`/`loginWithPasskey`: stamp_login naming the parent; the account it landed in
 * (its activity's, also where a root quorum holds it for a vote), or the refusal's code.
 */
async function signInFromParent(h: Harness, passkey: SoftPasskey): Promise<string> {
  h.clock.advance(1)
  const login = await h.submit(
    'stamp_login',
    { publicKey: testKey().publicKey },
    { as: passkey, organizationId: h.organizationId },
  )
  if (login.status !== 200) return `${login.status} ${JSON.stringify(login.body).match(/[A-Z_]{6,}/)?.[0]}`
  const { activity } = login.body
  if (activity.status === 'ACTIVITY_STATUS_COMPLETED')
    expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login).session).organization_id).toBe(
      activity.organizationId,
    )
  return activity.organizationId
}

describe('a passkey first shown by its own registration', () => {
  it("signs a published client's passkey sign-up in from the parent after its session used the account", async () => {
    const h = await createHarness()
    const passkey = softPasskey()
    const temporary = testKey()
    // signUpWithPasskey: /v1/signup_v2 with the passkey and a 60-second key (buildSignUpBody's shape).
    const reply = await h.service.app.request('/v1/signup_v2', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        Origin: 'http://app.test',
      },
      body: JSON.stringify({
        userName: 'user-1',
        authenticators: [passkey.register(undefined, 'app.test-1')],
        organizationName: 'sub-org-1',
        apiKeys: [
          {
            apiKeyName: `passkey-auth-${temporary.publicKey}`,
            publicKey: temporary.publicKey,
            curveType: 'API_KEY_CURVE_P256',
            expirationSeconds: '60',
          },
        ],
        oauthProviders: [],
      }),
    })
    const signedUp = (await reply.json()) as { organizationId: string }
    expect(reply.status, JSON.stringify(signedUp)).toBe(200)
    const at = { organizationId: signedUp.organizationId }

    // Its session: stamp_login by the 60-second key naming the new account.
    const session = testKey()
    h.clock.advance(1)
    const login = await h.submit('stamp_login', { publicKey: session.publicKey }, { as: temporary, ...at })
    expect(login.status, JSON.stringify(login.body)).toBe(200)

    // The app uses the account: a wallet, a signature.
    h.clock.advance(1)
    const wallet = await h.submit(
      'create_wallet',
      {
        walletName: 'Default',
        accounts: [
          {
            curve: 'CURVE_SECP256K1',
            pathFormat: 'PATH_FORMAT_BIP32',
            path: "m/44'/60'/0'/0/0",
            addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
          },
        ],
      },
      { as: session, ...at },
    )
    expect(wallet.status, JSON.stringify(wallet.body)).toBe(200)
    h.clock.advance(1)
    const signed = await h.submit(
      'sign_raw_payload',
      {
        signWith: resultOf('create_wallet', wallet).addresses[0],
        payload: '0x68656c6c6f',
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_KECCAK256',
      },
      { as: session, ...at },
    )
    expect(signed.status, JSON.stringify(signed.body)).toBe(200)

    // The next day, loginWithPasskey naming the parent lands in the account; the session stays.
    expect(await signInFromParent(h, passkey)).toBe(signedUp.organizationId)
    expect((await h.query('whoami', at, { as: session, ...at })).status).toBe(200)
  })

  it('routes no sign-in into an account where someone planted the passkey after its holder removed it', async () => {
    const h = await createHarness()
    // The holder's account: the passkey registered beside the user's key, then removed.
    const holder = await h.createSubOrganization({ name: 'holder' })
    const passkey = softPasskey()
    const asHolder = { as: holder.keys[0]!, organizationId: holder.organizationId }
    h.clock.advance(1)
    const added = await h.submit(
      'create_authenticators',
      { userId: holder.userIds[0], authenticators: [passkey.register(undefined, 'Phone')] },
      asHolder,
    )
    expect(added.status).toBe(200)
    expect(await signInFromParent(h, passkey)).toBe(holder.organizationId)
    h.clock.advance(1)
    const removed = await h.submit(
      'delete_authenticators',
      {
        userId: holder.userIds[0],
        authenticatorIds: resultOf('create_authenticators', added).authenticatorIds,
      },
      asHolder,
    )
    expect(removed.status, JSON.stringify(removed.body)).toBe(200)

    // Someone who read the registration plants it in an account of their own and uses it.
    const attacker = await h.createSubOrganization({ name: 'attacker' })
    const asAttacker = { as: attacker.keys[0]!, organizationId: attacker.organizationId }
    h.clock.advance(1)
    const planted = await h.submit(
      'create_authenticators',
      {
        userId: attacker.userIds[0],
        authenticators: [{ ...passkey.register(undefined, 'Phone'), authenticatorName: 'mine' }],
      },
      asAttacker,
    )
    expect(planted.status, JSON.stringify(planted.body)).toBe(200)
    h.clock.advance(1)
    expect((await h.submit('create_wallet', { walletName: 'bait', accounts: [] }, asAttacker)).status).toBe(
      200,
    )
    expect(await signInFromParent(h, passkey)).toBe('401 PUBLIC_KEY_NOT_FOUND')
  })

  it('counts a registration that waited for a vote as the first, and a copy made while it waited as none', async () => {
    const h = await createHarness()
    const [personKey, coRootKey] = [testKey(), testKey()]
    const person = await h.createSubOrganization({
      name: 'person',
      keys: [personKey, coRootKey],
      threshold: 2,
    })
    const passkey = softPasskey()
    h.clock.advance(1)
    const pending = await h.submit(
      'create_authenticators',
      { userId: person.userIds[0], authenticators: [passkey.register(undefined, 'Phone')] },
      { as: personKey, organizationId: person.organizationId },
    )
    expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')

    // A copy made from the waiting record, in another parent's tree... here another account of the
    // same parent is refused outright (one account per credential id), so the copy goes first and
    // the person's registration then meets it; the copy routes nothing once used.
    const attacker = await h.createSubOrganization({ name: 'attacker' })
    const asAttacker = { as: attacker.keys[0]!, organizationId: attacker.organizationId }
    h.clock.advance(1)
    const copy = await h.submit(
      'create_authenticators',
      { userId: attacker.userIds[0], authenticators: [passkey.register(undefined, 'Phone')] },
      asAttacker,
    )
    expect(copy.status, JSON.stringify(copy.body)).toBe(200)
    h.clock.advance(1)
    expect((await h.submit('create_wallet', { walletName: 'bait', accounts: [] }, asAttacker)).status).toBe(
      200,
    )
    expect(await signInFromParent(h, passkey)).toBe('401 PUBLIC_KEY_NOT_FOUND')

    // The attacker lets it go; the co-root approves the person's registration: the first to show
    // the passkey, so it signs in from the parent at once.
    h.clock.advance(1)
    const [planted] = await h.service.store.findBy(
      'authenticators',
      'organizationId',
      attacker.organizationId,
    )
    const dropped = await h.submit(
      'delete_authenticators',
      { userId: attacker.userIds[0], authenticatorIds: [planted!.id] },
      asAttacker,
    )
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200)
    h.clock.advance(1)
    const approved = await h.submit(
      'approve_activity',
      { fingerprint: pending.body.activity.fingerprint },
      { as: coRootKey, organizationId: person.organizationId },
    )
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    expect(approved.body.activity.status, JSON.stringify(approved.body.activity)).toBe(
      'ACTIVITY_STATUS_COMPLETED',
    )
    expect(await signInFromParent(h, passkey)).toBe(person.organizationId)
  })

  it("counts no registration of someone's public key under a new credential id as the first, so the lookups by public key skip it", async () => {
    const h = await createHarness()
    const person = await h.createSubOrganization({ name: 'person' })
    const passkey = softPasskey()
    h.clock.advance(1)
    const mine = await h.submit(
      'create_authenticators',
      { userId: person.userIds[0], authenticators: [passkey.register(undefined, 'Phone')] },
      { as: person.keys[0]!, organizationId: person.organizationId },
    )
    expect(mine.status).toBe(200)

    const attacker = await h.createSubOrganization({ name: 'attacker' })
    const asAttacker = { as: attacker.keys[0]!, organizationId: attacker.organizationId }
    const { registration, publicKey } = underAnotherId(
      passkey.register(undefined, 'mine'),
      globalThis.crypto.getRandomValues(new Uint8Array(16)),
    )
    h.clock.advance(1)
    const planted = await h.submit(
      'create_authenticators',
      { userId: attacker.userIds[0], authenticators: [registration] },
      asAttacker,
    )
    expect(planted.status, JSON.stringify(planted.body)).toBe(200)
    h.clock.advance(1)
    expect((await h.submit('create_wallet', { walletName: 'bait', accounts: [] }, asAttacker)).status).toBe(
      200,
    )
    const found = await h.query('list_suborgs', {
      organizationId: h.organizationId,
      filterType: 'PUBLIC_KEY',
      filterValue: publicKey,
    })
    expect(found.status, JSON.stringify(found.body)).toBe(200)
    expect(found.body.organizationIds).toEqual([person.organizationId])
  })
})
