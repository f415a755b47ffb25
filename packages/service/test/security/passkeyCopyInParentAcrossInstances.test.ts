// One credential id registered at once in the parent organization (on instance A) and in a
// sub-organization of it (on instance B), two service instances on one PostgreSQL database: the
// parent and its sub-organizations are one claim scope (domain/users.ts, `claimPasskey`), so
// both registrations write the same claim row and meet its primary key: exactly one holds the
// credential id, the other is refused 409 naming it. Before, a registration in the parent claimed
// nothing, and both went through.
import { base64urlnopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { type Harness, softPasskey, testKey } from '../../src/testing/harness.ts'
import { useTwoInstances } from '../support/twoInstances.ts'

const pair = useTwoInstances('passkey_parent_claim')

describe('a credential id registered in the parent and in a sub-organization at once, across two instances', () => {
  it('exactly one registration holds it, the other is refused 409 naming it', async () => {
    const { a, b } = pair
    const rootUserId = (await a.query('whoami', {})).body.userId as string
    const key = testKey()
    const account = await b.createSubOrganization({ keys: [key] })
    const register = (
      h: Harness,
      at: { userId: string; as?: ReturnType<typeof testKey>; organizationId: string },
      passkey: ReturnType<typeof softPasskey>,
      timestamp: number,
    ) =>
      h.submit(
        'create_authenticators',
        { userId: at.userId, authenticators: [passkey.register()] },
        {
          ...(at.as ? { as: at.as } : {}),
          organizationId: at.organizationId,
          timestampMs: String(timestamp),
        },
      )
    for (let round = 0; round < 4; round++) {
      const original = softPasskey()
      const copy = softPasskey({ credentialId: base64urlnopad.decode(original.credentialId) })
      const inParent = { userId: rootUserId, organizationId: a.organizationId }
      const inAccount = { userId: account.userIds[0]!, as: key, organizationId: account.organizationId }
      // Alternate which side registers the original, so each side sometimes starts first.
      const [parentReply, accountReply] = await Promise.all([
        register(a, inParent, round % 2 ? copy : original, Date.now() + round * 2),
        register(b, inAccount, round % 2 ? original : copy, Date.now() + round * 2 + 1),
      ])
      const statuses = [parentReply.status, accountReply.status]
      expect([...statuses].sort(), JSON.stringify([parentReply.body, accountReply.body])).toEqual([200, 409])
      const refused = parentReply.status === 409 ? parentReply : accountReply
      expect(refused.body.details?.field).toBe('parameters.authenticators[0].attestation.credentialId')
      const holders = (
        await a.service.store.findBy('authenticators', 'credentialId', original.credentialId)
      ).map((row) => row.organizationId)
      expect(holders).toEqual([parentReply.status === 200 ? a.organizationId : account.organizationId])
    }
  }, 120_000)

  it('an import of the passkey and its registration in the parent at once: exactly one holds it', async () => {
    const { a, b } = pair
    const rootUserId = (await b.query('whoami', {})).body.userId as string
    for (let round = 0; round < 4; round++) {
      const original = softPasskey()
      const [imported, registered] = await Promise.all([
        a.submit('latchkey_import_user', {
          externalId: `parent-claim-${round}`,
          passkeys: [{ credentialId: original.credentialId, cosePublicKey: original.cosePublicKey }],
        }),
        b.submit(
          'create_authenticators',
          { userId: rootUserId, authenticators: [original.register()] },
          { timestampMs: String(Date.now() + round) },
        ),
      ])
      expect(
        [imported.status, registered.status].sort(),
        JSON.stringify([imported.body, registered.body]),
      ).toEqual([200, 409])
      expect(
        await a.service.store.findBy('authenticators', 'credentialId', original.credentialId),
      ).toHaveLength(1)
    }
  }, 120_000)
})
