import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../../scripts/postgres.mjs'
import { openPostgres } from './durableStores.ts'
import type { PluginRow } from './model.ts'
import type { Store, Transaction } from './Store.ts'

/**
 * What one statement of lookups (`Queries.lookupMany`, PostgreSQL's reads ahead) answers when its
 * lookups overlap: the same rows reached by several lookups, and a lock group's reads of a table
 * its transactions wrote (answered from the group's read with the rows it wrote laid over it).
 */
let cluster: PostgresCluster
let database = 0
beforeAll(async () => {
  cluster = await startPostgres()
}, 120_000)
afterAll(async () => {
  await cluster?.dispose()
}, 60_000)

async function open(): Promise<Store> {
  const name = `lookups_${++database}`
  cluster.psql(`create database ${name}`)
  return openPostgres(cluster.url.replace(/\/[^/]*$/, `/${name}`), { max: 8 })
}

const doc = (id: string, fields: Record<string, unknown>) =>
  ({ id, createdAt: 1, updatedAt: 1, ...fields }) as never

const row = (id: string, data: Record<string, unknown>, kind: string): PluginRow => ({
  id,
  kind,
  data,
  createdAt: 1,
  updatedAt: 1,
})

describe('lookups in one statement (PostgreSQL)', () => {
  it("a parent's rows reached from several sub-organizations and by their own field are each answered once, in id order", async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      await tx.put('organizations', doc('p', { name: 'parent' }))
      for (const id of ['s1', 's2', 's3'])
        await tx.put('organizations', doc(id, { name: id, parentOrganizationId: 'p' }))
      for (const id of ['u3', 'u1', 'u2']) await tx.put('users', doc(id, { organizationId: 'p' }))
      await tx.put('users', doc('u9', { organizationId: 's1' }))
    })
    const parentsUsers = (id: string) => ({
      table: 'users' as const,
      field: 'organizationId',
      from: { table: 'organizations' as const, id, column: 'parentOrganizationId' },
    })
    const reads = (
      await store.prefetch([
        parentsUsers('s1'),
        { table: 'users', field: 'organizationId', value: 'p' },
        parentsUsers('s2'),
        parentsUsers('s3'),
        parentsUsers('s2'),
        { table: 'users', field: 'organizationId', value: 's1' },
      ])
    ).alone()
    expect((await reads.findBy('users', 'organizationId', 'p')).map((u) => u.id)).toEqual(['u1', 'u2', 'u3'])
    expect((await reads.findBy('users', 'organizationId', 's1')).map((u) => u.id)).toEqual(['u9'])
    await store.close()
  })

  it("a lock group's reads of a table it wrote: untouched answers as read, the rows written laid over the rest, each transaction's own writes too", async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      for (const [id, kind] of [
        ['a1', 'a'],
        ['a2', 'a'],
        ['b1', 'b'],
        ['c1', 'c'],
      ] as const)
        await tx.put('pluginRows', row(id, { v: 0 }, kind))
    })
    const readAhead = ['a', 'b', 'c'].map((value) => ({
      table: 'pluginRows' as const,
      field: 'kind',
      value,
    }))
    const options = { isolation: 'snapshot' as const, locks: ['one'], readAhead }
    const kinds = async (tx: Transaction) =>
      Object.fromEntries(
        await Promise.all(
          ['a', 'b', 'c'].map(async (kind) => [
            kind,
            (await tx.findBy('pluginRows', 'kind', kind)).map((r) => `${r.id}=${r.data.v}`),
          ]),
        ),
      )
    const seen: unknown[] = []
    const before = store.batching().commits?.batches ?? 0
    await Promise.all([
      // Rewrites a row of `a`, moves `b1` to `c`, adds a row to `b`.
      store.transaction(async (tx) => {
        seen.push(await kinds(tx))
        await tx.put('pluginRows', row('a2', { v: 1 }, 'a'))
        await tx.put('pluginRows', row('b1', { v: 1 }, 'c'))
        await tx.put('pluginRows', row('b0', { v: 1 }, 'b'))
        seen.push(await kinds(tx))
      }, options),
      // Sees all of that; its own write of a new row of `c` too.
      store.transaction(async (tx) => {
        seen.push(await kinds(tx))
        await tx.put('pluginRows', row('c0', { v: 2 }, 'c'))
        seen.push(await kinds(tx))
      }, options),
    ])
    // One group: the second transaction read the first one's writes from the group's one read.
    expect((store.batching().commits?.batches ?? 0) - before).toBe(1)
    const read = { a: ['a1=0', 'a2=0'], b: ['b1=0'], c: ['c1=0'] }
    const first = { a: ['a1=0', 'a2=1'], b: ['b0=1'], c: ['b1=1', 'c1=0'] }
    expect(seen).toEqual([read, first, first, { ...first, c: ['b1=1', 'c0=2', 'c1=0'] }])
    // As committed.
    for (const [kind, rows] of Object.entries({ ...first, c: ['b1=1', 'c0=2', 'c1=0'] }))
      expect((await store.findBy('pluginRows', 'kind', kind)).map((r) => `${r.id}=${r.data.v}`)).toEqual(rows)
    await store.close()
  })
})
