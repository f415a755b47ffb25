/**
 * The per-organization caps (domain/resourceLimits.ts) raced over two instances on one PostgreSQL
 * database: filled to one short of the cap, then six creates at once, three on each instance.
 * The count is read in each activity's SERIALIZABLE transaction, so exactly one is made.
 */
import { describe, expect, it } from 'vitest'
import { RESOURCE_LIMITS } from '../../src/domain/resourceLimits.ts'
import type { TestKey } from '../../src/testing/harness.ts'
import { useTwoInstances } from '../support/twoInstances.ts'

const pair = useTwoInstances('resource_limits', { timeouts: { start: 120_000 } })

async function fullButOne(table: 'users' | 'wallets', cap: number) {
  const { a } = pair
  const sub = await a.createSubOrganization()
  const held = await a.service.store.count(table, 'organizationId', sub.organizationId)
  const now = a.clock.now()
  await a.service.store.transaction(async (tx) => {
    for (let i = 0; i < cap - 1 - held; i++) {
      const row = {
        id: `filler-${table}-${i}`,
        organizationId: sub.organizationId,
        createdAt: now,
        updatedAt: now,
      }
      if (table === 'users') await tx.put('users', { ...row, userName: `filler ${i}` })
      else
        await tx.put('wallets', {
          ...row,
          name: `filler ${i}`,
          sealedMnemonic: '',
          mnemonicLength: 12,
          exported: false,
          imported: false,
        })
    }
  })
  return { sub, as: { as: sub.keys[0] as TestKey, organizationId: sub.organizationId } }
}

describe('per-organization caps across instances', () => {
  it('six create_users at one short of the cap: one user is made', async () => {
    const { a, b } = pair
    const { sub, as } = await fullButOne('users', RESOURCE_LIMITS.usersPerOrganization)
    a.clock.advance(1)
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).submit(
          'create_users',
          { users: [{ userName: `u${i}`, apiKeys: [], authenticators: [], oauthProviders: [] }] },
          as,
        ),
      ),
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 412, 412, 412, 412, 412])
    expect(await a.service.store.count('users', 'organizationId', sub.organizationId)).toBe(
      RESOURCE_LIMITS.usersPerOrganization,
    )
  }, 60_000)

  it('six create_wallet at one short of the cap: one wallet is made', async () => {
    const { a, b } = pair
    const { sub, as } = await fullButOne('wallets', RESOURCE_LIMITS.walletsPerOrganization)
    a.clock.advance(1)
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).submit('create_wallet', { walletName: `w${i}`, accounts: [] }, as),
      ),
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 412, 412, 412, 412, 412])
    expect(await a.service.store.count('wallets', 'organizationId', sub.organizationId)).toBe(
      RESOURCE_LIMITS.walletsPerOrganization,
    )
  }, 60_000)
})
