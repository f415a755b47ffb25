// A copy of a person's passkey in the parent organization written before passkeys carried the
// `unproven` mark (161b12ad left existing rows unmarked: proven) took every sign-in from the parent
// once the fix for copies in the parent (31d41bc2) had landed, since `passkeyFor` took an unmarked
// row of the named organization first. A row of a top-level organization registered after an
// account under it registered the same credential id is now a copy, marked or not; one registered
// before (the operator's own passkey) signs in as before. Found by the audit of 31d41bc2.
import { ACTIVITIES, decodeJwtClaims, type SessionClaims } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import {
  createHarness,
  type Harness,
  resultOf,
  type SoftPasskey,
  softPasskey,
  testKey,
} from '../../src/testing/harness.ts'
import { proxySignUpWithPasskey } from './proxySignUp.ts'
import { supportUser } from './recordReaders.ts'

async function signInFromParent(h: Harness, passkey: SoftPasskey) {
  h.clock.advance(1)
  const login = await h.submit(
    'stamp_login',
    { publicKey: testKey().publicKey },
    { as: passkey, organizationId: h.organizationId },
  )
  if (login.status !== 200) return { refused: login.status }
  const claims = decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login).session)
  return { organizationId: claims.organization_id, userId: claims.user_id }
}

/** A parent whose staff user may sign in and register passkeys, and a person signed up with `passkey`. */
async function parentAndPerson() {
  const h = await createHarness()
  const support = await supportUser(h)
  const staffId = (await h.query('whoami', {}, { as: support.as, organizationId: h.organizationId })).body
    .userId as string
  h.clock.advance(1)
  resultOf(
    'create_policy',
    await h.submit('create_policy', {
      policyName: 'staff sign in',
      effect: 'EFFECT_ALLOW',
      condition: `activity.type == 'ACTIVITY_TYPE_STAMP_LOGIN' || activity.type == '${ACTIVITIES.create_authenticators.type}'`,
      consensus: `approvers.any(user, user.id == '${staffId}')`,
    }),
  )
  const passkey = softPasskey()
  const person = await proxySignUpWithPasskey(h, passkey)
  const [original] = await h.service.store.findBy('authenticators', 'credentialId', passkey.credentialId)
  return { h, staffId, passkey, person, original: original! }
}

describe('an unmarked passkey row in the parent', () => {
  it("registered after the person's own (a staff user's copy) takes none of the person's sign-ins", async () => {
    const { h, staffId, passkey, person, original } = await parentAndPerson()
    expect((await signInFromParent(h, passkey)).organizationId).toBe(person.organizationId)
    const { unproven: _none, ...unmarked } = original
    await h.service.store.transaction((tx) =>
      tx.put('authenticators', {
        ...unmarked,
        id: 'legacy-copy-in-parent',
        organizationId: h.organizationId,
        userId: staffId,
        name: 'copy',
        createdAt: original.createdAt + 1,
        updatedAt: original.createdAt + 1,
      }),
    )
    for (let i = 0; i < 2; i++)
      expect(await signInFromParent(h, passkey)).toEqual({
        organizationId: person.organizationId,
        userId: expect.any(String),
      })
    expect((await h.service.store.get('authenticators', 'legacy-copy-in-parent'))?.unproven).toBeUndefined()
    await h.service.close()
  })

  it('registered before any account under it held the credential id (its own) signs in as before', async () => {
    const { h, staffId, passkey, original } = await parentAndPerson()
    const { unproven: _none, ...unmarked } = original
    await h.service.store.transaction((tx) =>
      tx.put('authenticators', {
        ...unmarked,
        id: 'staff-own-passkey',
        organizationId: h.organizationId,
        userId: staffId,
        name: 'own',
        createdAt: original.createdAt - 1,
        updatedAt: original.createdAt - 1,
      }),
    )
    expect(await signInFromParent(h, passkey)).toEqual({ organizationId: h.organizationId, userId: staffId })
    await h.service.close()
  })
})
