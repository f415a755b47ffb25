// A copy of a person's passkey registered in the PARENT organization (on a staff user of the
// operator's organization, from the credential id and COSE public key list_users shows) takes none
// of that person's passkey sign-ins. signInWithPasskey (and the published clients'
// loginWithPasskey) stamp `stamp_login` naming the parent, and `passkeyFor` once took a row in the
// named organization first, proving it by that very stamp; and registration refused a credential
// id twice only among sub-organizations of one parent. Now the parent and its sub-organizations
// are one claim scope (domain/users.ts, `claimPasskey`), and an unproven row in a top-level
// organization is never proven by a stamp naming it (pipeline/authenticate.ts, `passkeyFor`).

import { ACTIVITIES, decodeJwtClaims, type SessionClaims } from '@latchkey/protocol'
import { sha256 } from '@noble/hashes/sha2.js'
import { concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers'
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
import { proxyCall, showPasskey } from './proxySignUp.ts'
import { supportUser } from './recordReaders.ts'

const CREDENTIAL_FIELD = 'parameters.authenticators[0].attestation.credentialId'

/** A registration ("none" attestation) made from a credential id and COSE public key (hex) alone: no private key. */
function registrationOf(credentialId: string, coseHex: string) {
  const id = isoBase64URL.toBuffer(credentialId)
  const authData = concatBytes(
    sha256(utf8ToBytes('localhost')),
    new Uint8Array([0x45]),
    new Uint8Array(4),
    new Uint8Array(16),
    new Uint8Array([(id.length >> 8) & 0xff, id.length & 0xff]),
    id,
    hexToBytes(coseHex),
  )
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]) as never,
  )
  const challenge = b64url(globalThis.crypto.getRandomValues(new Uint8Array(32)))
  const clientData = {
    type: 'webauthn.create',
    challenge,
    origin: 'http://localhost:5173',
    crossOrigin: false,
  }
  return {
    authenticatorName: 'mine',
    challenge,
    attestation: {
      credentialId,
      clientDataJson: b64url(utf8ToBytes(JSON.stringify(clientData))),
      attestationObject: b64url(attestationObject),
      transports: ['AUTHENTICATOR_TRANSPORT_INTERNAL'],
    },
  }
}

/** A staff user of the operator's organization allowed to add passkeys to itself and to sign in. */
async function staffUser(h: Harness) {
  const support = await supportUser(h)
  const userId = (await h.query('whoami', {}, { as: support.as, organizationId: h.organizationId })).body
    .userId as string
  h.clock.advance(1)
  resultOf(
    'create_policy',
    await h.submit('create_policy', {
      policyName: `staff ${userId} manage own passkeys and sign in`,
      effect: 'EFFECT_ALLOW',
      condition: `activity.type == '${ACTIVITIES.create_authenticators.type}' || activity.type == 'ACTIVITY_TYPE_STAMP_LOGIN'`,
      consensus: `approvers.any(user, user.id == '${userId}')`,
    }),
  )
  return { ...support, userId }
}

/** The staff user's registration, on itself in the parent, of the passkey whose COSE key (hex) it read. */
async function copyInParent(
  h: Harness,
  staff: Awaited<ReturnType<typeof staffUser>>,
  shown: { credentialId: string; coseHex: string },
) {
  h.clock.advance(1)
  return h.submit(
    'create_authenticators',
    { userId: staff.userId, authenticators: [registrationOf(shown.credentialId, shown.coseHex)] },
    { as: staff.as, organizationId: h.organizationId },
  )
}

/** `passkey`'s sign-in from the parent: the organization and user it lands as, or the refusal's code. */
async function signInFromParent(h: Harness, passkey: SoftPasskey) {
  h.clock.advance(1)
  const login = await h.submit(
    'stamp_login',
    { publicKey: testKey().publicKey },
    { as: passkey, organizationId: h.organizationId },
  )
  if (login.status !== 200)
    return {
      refused: `${login.status} ${JSON.stringify(login.body).match(/PUBLIC_KEY_NOT_FOUND|[A-Z_]{6,}/)?.[0]}`,
    }
  const claims = decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login).session)
  return { organizationId: claims.organization_id, userId: claims.user_id }
}

const coseHexOf = (passkey: SoftPasskey) =>
  Buffer.from(isoBase64URL.toBuffer(passkey.cosePublicKey)).toString('hex')

describe('a copy of a passkey in the parent organization', () => {
  it("registered after the person's account: refused 409 naming the credential id, and the sign-in still lands in the account", async () => {
    const h = await createHarness()
    const passkey = softPasskey()
    h.clock.advance(1)
    const personOrg = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'person',
        rootUsers: [
          { userName: 'person', apiKeys: [], authenticators: [passkey.register()], oauthProviders: [] },
        ],
        rootQuorumThreshold: 1,
      }),
    ).subOrganizationId as string
    expect((await signInFromParent(h, passkey)).organizationId).toBe(personOrg)

    // The staff user reads the passkey in list_users and registers it on itself in the parent.
    const staff = await staffUser(h)
    const listed = await h.query(
      'list_users',
      { organizationId: personOrg },
      { as: staff.as, organizationId: personOrg },
    )
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    const shown = listed.body.users[0].authenticators[0]
    const copy = await copyInParent(h, staff, {
      credentialId: shown.credentialId,
      coseHex: shown.credential.publicKey,
    })
    expect(copy.status, JSON.stringify(copy.body)).toBe(409)
    expect(copy.body.details?.field).toBe(CREDENTIAL_FIELD)
    const rows = await h.service.store.findBy('authenticators', 'credentialId', passkey.credentialId)
    expect(rows.map((row) => row.organizationId)).toEqual([personOrg])

    expect(await signInFromParent(h, passkey)).toEqual({
      organizationId: personOrg,
      userId: expect.any(String),
    })
  })

  it("registered before the person's account: the person's sign-up is refused (409), and the sign-in lands nowhere, not as the staff user", async () => {
    const h = await createHarness()
    const staff = await staffUser(h)
    // The passkey was shown before it was registered anywhere (a failed registration's record).
    const passkey = softPasskey()
    await showPasskey(h, passkey)
    const copy = await copyInParent(h, staff, {
      credentialId: passkey.credentialId,
      coseHex: coseHexOf(passkey),
    })
    expect(copy.status, JSON.stringify(copy.body)).toBe(200)
    const [copied] = await h.service.store.findBy('authenticators', 'credentialId', passkey.credentialId)
    expect(copied?.unproven).toBe(true)

    // The person signs up with it, through the auth proxy: refused naming the credential id.
    const signUp = await proxyCall(
      h,
      'signup',
      { userName: 'person', authenticators: [passkey.register()], apiKeys: [], oauthProviders: [] },
      '203.0.113.7',
    )
    expect(signUp.status, JSON.stringify(signUp.body)).toBe(409)
    // The operator makes the person's account with it: refused the same way.
    h.clock.advance(1)
    const made = await h.submit('create_sub_organization', {
      subOrganizationName: 'person',
      rootUsers: [
        { userName: 'person', apiKeys: [], authenticators: [passkey.register()], oauthProviders: [] },
      ],
      rootQuorumThreshold: 1,
    })
    expect(made.status, JSON.stringify(made.body)).toBe(409)
    expect(made.body.details?.field).toBe(
      `parameters.rootUsers[0].authenticators[0].attestation.credentialId`,
    )

    // The person's passkey sign-in from the parent does not land in the staff user's account (a
    // stamp naming the parent proves nothing about who registered a row there), and does not
    // prove the copy either: it is refused now and later.
    for (let attempt = 0; attempt < 2; attempt++)
      expect(await signInFromParent(h, passkey)).toEqual({ refused: '401 PUBLIC_KEY_NOT_FOUND' })
    const [after] = await h.service.store.findBy('authenticators', 'credentialId', passkey.credentialId)
    expect(after?.unproven).toBe(true)
  })

  it('left from before the fix beside the accounts holding it: routes nothing, and is proven by no stamp naming the parent', async () => {
    const h = await createHarness()
    const staff = await staffUser(h)
    // The person's account, then a copy of its passkey on the staff user written straight to
    // storage, as a registration in the parent made before claims spanned the parent left it.
    const passkey = softPasskey()
    h.clock.advance(1)
    const personOrg = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'person',
        rootUsers: [
          { userName: 'person', apiKeys: [], authenticators: [passkey.register()], oauthProviders: [] },
        ],
        rootQuorumThreshold: 1,
      }),
    ).subOrganizationId as string
    const [original] = await h.service.store.findBy('authenticators', 'credentialId', passkey.credentialId)
    const leftover = {
      ...original!,
      id: 'authenticator-left-in-parent',
      organizationId: h.organizationId,
      userId: staff.userId,
      name: 'mine',
      unproven: true as const,
      createdAt: original!.createdAt + 1,
      updatedAt: original!.createdAt + 1,
    }
    await h.service.store.transaction((tx) => tx.put('authenticators', leftover))

    // Signed in from the parent, it lands in the person's account however often.
    for (let attempt = 0; attempt < 2; attempt++)
      expect((await signInFromParent(h, passkey)).organizationId).toBe(personOrg)
    expect((await h.service.store.get('authenticators', leftover.id))?.unproven).toBe(true)

    // With the person's account used by someone else and its passkey never proven there (a copy
    // made from a record, say), the sign-in is refused rather than land in the parent.
    const other = softPasskey()
    await showPasskey(h, other)
    const used = await h.createSubOrganization({ name: 'used' })
    h.clock.advance(1)
    expect(
      (
        await h.submit(
          'create_authenticators',
          { userId: used.userIds[0], authenticators: [other.register()] },
          { as: used.keys[0]!, organizationId: used.organizationId },
        )
      ).status,
    ).toBe(200)
    const [registered] = await h.service.store.findBy('authenticators', 'credentialId', other.credentialId)
    expect(registered?.unproven).toBe(true)
    await h.service.store.transaction((tx) =>
      tx.put('authenticators', {
        ...registered!,
        id: 'authenticator-left-in-parent-2',
        organizationId: h.organizationId,
        userId: staff.userId,
        createdAt: registered!.createdAt + 1,
      }),
    )
    expect(await signInFromParent(h, other)).toEqual({ refused: '401 PUBLIC_KEY_NOT_FOUND' })
  })

  it('registered by the operator itself (its root user, on a staff user) in the parent: still signs in naming the parent, and no account under it gets it', async () => {
    const h = await createHarness()
    const staff = await staffUser(h)
    const passkey = softPasskey()
    await showPasskey(h, passkey)
    h.clock.advance(1)
    const vouched = await h.submit('create_authenticators', {
      userId: staff.userId,
      authenticators: [passkey.register()],
    })
    expect(vouched.status, JSON.stringify(vouched.body)).toBe(200)
    expect(await signInFromParent(h, passkey)).toEqual({
      organizationId: h.organizationId,
      userId: staff.userId,
    })
    // And a sub-organization's registration of it is then refused, as one in another sub-organization is.
    const account = await h.createSubOrganization({ name: 'later' })
    h.clock.advance(1)
    const later = await h.submit(
      'create_authenticators',
      { userId: account.userIds[0], authenticators: [passkey.register()] },
      { as: account.keys[0]!, organizationId: account.organizationId },
    )
    expect(later.status, JSON.stringify(later.body)).toBe(409)
    expect(later.body.details?.field).toBe(CREDENTIAL_FIELD)
    // And so is an import of it (which reads the parent's claims, not the rows in the parent).
    h.clock.advance(1)
    const imported = await h.submit('latchkey_import_user', {
      externalId: 'person',
      passkeys: [{ credentialId: passkey.credentialId, cosePublicKey: passkey.cosePublicKey }],
    })
    expect(imported.status, JSON.stringify(imported.body)).toBe(409)
    expect(imported.body.details?.field).toBe('parameters.passkeys[0].credentialId')
  })
})
