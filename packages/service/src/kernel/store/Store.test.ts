import { mkdtempSync, rmSync } from 'node:fs'
import { type AddressInfo, createServer, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../../scripts/postgres.mjs'
import { openDataDir, openPostgres, sessionSettings } from './durableStores.ts'
import { kyselyOf } from './kyselyOf.ts'
import { openMemoryStore } from './memory.ts'
import type { PluginRow } from './model.ts'
import type { Prefetched } from './Prefetched.ts'
import { anyRows, type Store, type Transaction } from './Store.ts'

/**
 * The storage contract, run against every backend the service supports: the in-memory SQLite,
 * a data dir's SQLite file, and PostgreSQL (a throwaway cluster this file starts and removes).
 * Races here run against the database itself: every "only once" rule of the service rests on these.
 */
const dirs: string[] = []
// What the process was warned of while this file ran (see the last test).
const warnings: string[] = []
process.on('warning', (warning) => warnings.push(warning.message))
let cluster: PostgresCluster | undefined
let database = 0

// dispose() may wait up to 20 s for a server that will not stop (fast, then immediate shutdown,
// then SIGKILL): more than the default hook timeout leaves it.
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await cluster?.dispose()
}, 60_000)

/** A store of the backend; `lockChainMs`: PostgreSQL's lock chains keep their locks that long. */
const backends: [string, (tuning?: { lockChainMs?: number }) => Promise<Store>][] = [
  ['in-memory SQLite', () => openMemoryStore()],
  [
    'SQLite data dir',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'latchkey-store-'))
      dirs.push(dir)
      return openDataDir(dir)
    },
  ],
  [
    'PostgreSQL',
    async (tuning = {}) => {
      // A fresh database per store, so each test starts empty.
      const name = `contract_${++database}`
      cluster!.psql(`create database ${name}`)
      return openPostgres(cluster!.url.replace(/\/[^/]*$/, `/${name}`), { max: 12, ...tuning })
    },
  ],
]

const row = (id: string, data: Record<string, unknown> = {}, kind = 'test'): PluginRow => ({
  id,
  kind,
  data,
  createdAt: 1,
  updatedAt: 1,
})

/** How many transactions (`items`) and commits (`batches`) the store's groups ran since `before`. */
function commitsSince(store: Store, before: ReturnType<Store['batching']>['commits']) {
  const after = store.batching().commits!
  return { items: after.items - (before?.items ?? 0), batches: after.batches - (before?.batches ?? 0) }
}

/** A completed activity with `fingerprint` (unique in the database): what a signing records. */
const activityRow = (id: string, fingerprint: string) => ({
  id,
  organizationId: 'org',
  path: 'sign_transaction',
  type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
  status: 'ACTIVITY_STATUS_COMPLETED' as const,
  intent: {},
  fingerprint,
  userId: 'u',
  credentialId: 'c',
  callerOrganizationId: 'org',
  createdAt: 1,
  updatedAt: 1,
})

describe.each(backends)('storage contract: %s', (name, open) => {
  beforeAll(async () => {
    if (name === 'PostgreSQL' && !cluster) cluster = await startPostgres()
  }, 300_000)

  it('puts, reads back, finds by an indexed field in id order, counts, deletes', async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('b', { n: 2 }))
      await tx.put('pluginRows', row('a', { n: 1 }))
      await tx.put('pluginRows', row('c', { n: 3 }, 'other'))
      // A transaction sees its own writes.
      expect((await tx.get('pluginRows', 'a'))?.data).toEqual({ n: 1 })
    })
    expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id)).toEqual(['a', 'b'])
    expect(await store.count('pluginRows', 'kind', 'test')).toBe(2)
    await store.transaction((tx) => tx.put('pluginRows', row('a', { n: 10 }, 'other')))
    expect((await store.findBy('pluginRows', 'kind', 'other')).map((r) => r.id)).toEqual(['a', 'c'])
    await store.transaction((tx) => tx.delete('pluginRows', 'c'))
    expect(await store.get('pluginRows', 'c')).toBeUndefined()
    await expect(store.findBy('pluginRows', 'data' as 'kind', 'x')).rejects.toThrow(/no index/)
    await store.close()
  })

  it("a derived index field is the store's, computed at each write: a writer's value is not kept, in the column or the document", async () => {
    const store = await open()
    const user = {
      id: 'user-1',
      organizationId: 'org-1',
      userName: 'u',
      userEmail: ' Ada@Example.com',
      userEmailUnverified: true as const,
      // What a writer may not set: the store decides.
      verifiedEmail: 'ada@example.com',
      createdAt: 1,
      updatedAt: 1,
    }
    await store.transaction(async (tx) => {
      await tx.put('users', user)
      // In the transaction, as in the database.
      expect(await tx.findBy('users', 'verifiedEmail', 'ada@example.com')).toEqual([])
    })
    expect(await store.findBy('users', 'verifiedEmail', 'ada@example.com')).toEqual([])
    expect(await store.get('users', 'user-1')).not.toHaveProperty('verifiedEmail')
    // Verified: found by the normalised address, in the transaction that verified it too.
    const { userEmailUnverified: _, verifiedEmail: __, ...verified } = user
    await store.transaction(async (tx) => {
      await tx.put('users', verified)
      expect((await tx.findBy('users', 'verifiedEmail', 'ada@example.com')).map((r) => r.id)).toEqual([
        'user-1',
      ])
    })
    expect(await store.count('users', 'verifiedEmail', 'ada@example.com')).toBe(1)
    await store.close()
  })

  it('commits all or nothing: a throw rolls back every write; a savepoint undoes only what followed it', async () => {
    const store = await open()
    await expect(
      store.transaction(async (tx) => {
        await tx.put('pluginRows', row('x'))
        throw new Error('handler failed')
      }),
    ).rejects.toThrow('handler failed')
    expect(await store.get('pluginRows', 'x')).toBeUndefined()
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('kept'))
      const savepoint = await tx.savepoint()
      await tx.put('pluginRows', row('undone'))
      await tx.rollbackTo(savepoint)
    })
    expect(await store.get('pluginRows', 'kept')).toBeDefined()
    expect(await store.get('pluginRows', 'undone')).toBeUndefined()
    await store.close()
  })

  it('a lazy savepoint undoes what was written after it, nested ones included', async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('before'))
      const nothing = tx.lazySavepoint()
      await tx.get('pluginRows', 'before')
      await nothing.rollback()
      const outer = tx.lazySavepoint()
      const inner = tx.lazySavepoint()
      await tx.put('pluginRows', row('inner'))
      inner.end()
      await tx.put('pluginRows', row('outer'))
      await outer.rollback()
      const kept = tx.lazySavepoint()
      await tx.put('pluginRows', row('after'))
      kept.end()
    })
    expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id).sort()).toEqual([
      'after',
      'before',
    ])
    await store.close()
  })

  it('a transaction that reads ahead (readAhead) answers from its first read, sees its own writes, and its savepoints undo only what followed them', async () => {
    const store = await open()
    await store.transaction((tx) => tx.put('pluginRows', row('committed', { n: 1 })))
    // On PostgreSQL its writes are kept and sent together (one statement each side of a savepoint
    // that has writes after it); elsewhere the same calls go as they come.
    const options = {
      isolation: 'snapshot' as const,
      locks: ['contract'],
      readAhead: [{ table: 'pluginRows' as const, field: 'kind', value: 'test' }],
    }
    const ids = async (tx: Transaction) =>
      (await tx.findBy('pluginRows', 'kind', 'test')).map((r) => r.id).sort()
    await store.transaction(async (tx) => {
      expect(await ids(tx)).toEqual(['committed'])
      expect((await tx.get('pluginRows', 'committed'))?.data).toEqual({ n: 1 })
      await tx.put('pluginRows', row('a'))
      const nothing = tx.lazySavepoint()
      await nothing.rollback()
      const outer = tx.lazySavepoint()
      await tx.put('pluginRows', row('outer'))
      const inner = tx.lazySavepoint()
      await tx.put('pluginRows', row('inner'))
      // A read of a table it wrote sees what it kept so far.
      expect(await ids(tx)).toEqual(['a', 'committed', 'inner', 'outer'])
      await inner.rollback()
      expect(await ids(tx)).toEqual(['a', 'committed', 'outer'])
      // Written twice: the last one stays.
      await tx.put('pluginRows', row('a', { n: 2 }))
      await tx.put('pluginRows', row('a', { n: 3 }))
      const kept = tx.lazySavepoint()
      await tx.put('pluginRows', row('dropped'))
      await kept.rollback()
      outer.end()
    }, options)
    expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => [r.id, r.data])).toEqual([
      ['a', { n: 3 }],
      ['committed', { n: 1 }],
      ['outer', {}],
    ])
    await store.transaction(async (tx) => {
      const outer = tx.lazySavepoint()
      await tx.put('pluginRows', row('x'))
      await ids(tx)
      await tx.put('pluginRows', row('y'))
      await outer.rollback()
      await tx.put('pluginRows', row('z'))
    }, options)
    await expect(
      store.transaction(async (tx) => {
        await tx.put('pluginRows', row('thrown'))
        throw new Error('undone')
      }, options),
    ).rejects.toThrow('undone')
    expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id)).toEqual([
      'a',
      'committed',
      'outer',
      'z',
    ])
    await store.close()
  })

  it('a transaction that reads ahead answers what it did not read ahead from the database as of its transaction, never from reads made before it', async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('limit', { n: 1 }, 'ordered'))
      await tx.put('pluginRows', row('signer', { v: 1 }, 'signer'))
    })
    // The request's reads, made before the transaction.
    await store.prefetch([
      { table: 'pluginRows', field: 'kind', value: 'ordered' },
      { table: 'pluginRows', field: 'kind', value: 'signer' },
    ])
    // Both change after the request's reads and before its transaction.
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('limit', { n: 2 }, 'ordered'))
      await tx.put('pluginRows', row('signer', { v: 2 }, 'signer'))
    })
    const seen = await store.transaction(
      async (tx) => {
        const ordered = (await tx.findBy('pluginRows', 'kind', 'ordered')).map((r) => r.data)
        const signer = (await tx.findBy('pluginRows', 'kind', 'signer')).map((r) => r.data)
        const unread = (await tx.get('pluginRows', 'signer'))?.data
        await tx.put('pluginRows', row('new', {}, 'other'))
        const after = (await tx.findBy('pluginRows', 'kind', 'signer')).map((r) => r.data)
        return { ordered, signer, unread, after }
      },
      {
        isolation: 'snapshot',
        locks: ['ahead'],
        readAhead: [{ table: 'pluginRows', field: 'kind', value: 'ordered' }],
      },
    )
    // Read ahead after the lock, or from the database: the last commit, whatever was read before.
    expect(seen).toEqual({ ordered: [{ n: 2 }], signer: [{ v: 2 }], unread: { v: 2 }, after: [{ v: 2 }] })
    await store.close()
  })

  it('concurrent transactions that fail undo only their own writes (SQLite commits them as one group)', async () => {
    const store = await open()
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        store.transaction(async (tx) => {
          await tx.put('pluginRows', row(`t${i}`, { i }))
          // A nested savepoint of the function's own still works inside the group.
          const savepoint = await tx.savepoint()
          await tx.put('pluginRows', row(`t${i}-undone`, { i }))
          await tx.rollbackTo(savepoint)
          if (i % 3 === 0) throw new Error(`transaction ${i} failed`)
          return i
        }),
      ),
    )
    const failed = results.flatMap((result, i) => (result.status === 'rejected' ? [i] : []))
    expect(failed).toEqual(Array.from({ length: 10 }, (_, k) => k * 3))
    for (const [i, result] of results.entries())
      if (result.status === 'rejected')
        expect((result.reason as Error).message).toBe(`transaction ${i} failed`)
      else expect(result.value).toBe(i)
    const kept = (await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id).sort()
    expect(kept).toEqual(
      Array.from({ length: 30 }, (_, i) => i)
        .filter((i) => i % 3 !== 0)
        .map((i) => `t${i}`)
        .sort(),
    )
    await store.close()
  })

  it('transactions begun by separate I/O callbacks of one turn share a commit (SQLite groups them)', async () => {
    const store = await open()
    const before = store.batching().commits
    // As requests whose crypto jobs answer in the same turn of the event loop: one callback each.
    const done = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) =>
          new Promise((resolve, reject) =>
            setImmediate(() =>
              store.transaction((tx) => tx.put('pluginRows', row(`io${i}`))).then(resolve, reject),
            ),
          ),
      ),
    )
    expect(done).toHaveLength(20)
    expect(await store.count('pluginRows', 'kind', 'test')).toBe(20)
    const since = commitsSince(store, before)
    if (name === 'PostgreSQL')
      // Transactions that name no lock commit each on its own there (its groups are per lock).
      expect(since.items).toBe(0)
    else {
      // One commit (so one sync of the log) for all of them, not one each.
      expect(since.items).toBe(20)
      expect(since.batches).toBeLessThanOrEqual(2)
    }
    await store.close()
  })

  it('a read after a commit sees it, even when reads raced the commit (SQLite caches committed reads)', async () => {
    const store = await open()
    await store.transaction((tx) => tx.put('pluginRows', row('r', { n: 0 })))
    expect((await store.get('pluginRows', 'r'))?.data).toEqual({ n: 0 })
    expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id)).toEqual(['r'])
    for (let n = 1; n <= 30; n++) {
      // A read sent together with the commit may see either value; the read after it sees the new one.
      const [, during] = await Promise.all([
        store.transaction((tx) => tx.put('pluginRows', row('r', { n }))),
        store.get('pluginRows', 'r'),
        store.findBy('pluginRows', 'kind', 'test'),
      ])
      expect([n - 1, n]).toContain(during?.data.n)
      expect((await store.get('pluginRows', 'r'))?.data).toEqual({ n })
      expect((await store.findBy('pluginRows', 'kind', 'test'))[0]?.data).toEqual({ n })
    }
    await store.transaction((tx) => tx.put('pluginRows', row('s')))
    expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id)).toEqual(['r', 's'])
    // A document handed out is the caller's own: changing it changes nothing stored or cached.
    const mine = (await store.get('pluginRows', 'r'))!
    mine.data = { n: -1 }
    expect((await store.get('pluginRows', 'r'))?.data).toEqual({ n: 30 })
    await store.transaction((tx) => tx.delete('pluginRows', 'r'))
    expect(await store.get('pluginRows', 'r')).toBeUndefined()
    expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id)).toEqual(['s'])
    await store.close()
  })

  it('a prefetch answers every lookup as the separate reads would (PostgreSQL: read ahead in one statement)', async () => {
    const store = await open()
    const doc = (id: string, fields: Record<string, unknown>) => ({
      id,
      createdAt: 1,
      updatedAt: 1,
      ...fields,
    })
    await store.transaction(async (tx) => {
      await tx.put('organizations', doc('o1', { name: 'one' }) as never)
      await tx.put('users', doc('u2', { organizationId: 'o1' }) as never)
      await tx.put('users', doc('u1', { organizationId: 'o1' }) as never)
      await tx.put('users', doc('u9', { organizationId: 'o1' }) as never)
      // Two credentials with one public key (a parent's and a sub-organization's), and a key
      // whose user is gone.
      await tx.put('apiKeys', doc('k2', { publicKey: 'p', userId: 'u2', organizationId: 'o1' }) as never)
      await tx.put('apiKeys', doc('k1', { publicKey: 'p', userId: 'u1', organizationId: 'o2' }) as never)
      await tx.put('apiKeys', doc('k3', { publicKey: 'q', userId: 'gone', organizationId: 'o1' }) as never)
      await tx.put('pluginRows', row('r', { n: 1 }))
      // Sub-organizations: o2's parent has users, o3's has none.
      await tx.put('organizations', doc('o2', { name: 'two', parentOrganizationId: 'o1' }) as never)
      await tx.put('organizations', doc('o3', { name: 'three', parentOrganizationId: 'o8' }) as never)
    })
    const parentsUsers = (id: string) => ({
      table: 'users' as const,
      field: 'organizationId',
      from: { table: 'organizations' as const, id, column: 'parentOrganizationId' },
    })
    const via = (value: string) => ({
      table: 'apiKeys' as const,
      field: 'publicKey',
      value,
      column: 'userId',
    })
    const reads = await store.prefetch([
      { table: 'organizations', id: 'o1' },
      { table: 'organizations', id: 'missing' },
      { table: 'apiKeys', field: 'publicKey', value: 'p' },
      { table: 'users', via: via('p') },
      { table: 'users', via: via('q') },
      { table: 'pluginRows', field: 'kind', value: 'none' },
      parentsUsers('o2'),
      parentsUsers('o3'),
      parentsUsers('o1'),
    ])
    // What was asked for, found or not, as the store reads it.
    expect(await reads.get('organizations', 'o1')).toEqual(await store.get('organizations', 'o1'))
    expect(await reads.get('organizations', 'missing')).toBeUndefined()
    expect((await reads.findBy('apiKeys', 'publicKey', 'p')).map((k) => k.id)).toEqual(['k1', 'k2'])
    expect((await reads.get('users', 'u1'))?.organizationId).toBe('o1')
    expect((await reads.get('users', 'u2'))?.id).toBe('u2')
    expect(await reads.get('users', 'gone')).toBeUndefined()
    expect(await reads.findBy('pluginRows', 'kind', 'none')).toEqual([])
    // A parent's rows, found through the organization's column, are the lookup by field they
    // become, rows or none: a snapshot run reads them without a statement of its own.
    expect((await reads.findBy('users', 'organizationId', 'o1')).map((u) => u.id)).toEqual(['u1', 'u2', 'u9'])
    expect(await reads.findBy('users', 'organizationId', 'o8')).toEqual([])
    if (name === 'PostgreSQL') {
      const alone = (reads as Prefetched).alone()
      expect((await alone.findBy('users', 'organizationId', 'o1')).map((u) => u.id)).toEqual([
        'u1',
        'u2',
        'u9',
      ])
      expect(await alone.findBy('users', 'organizationId', 'o8')).toEqual([])
    }
    // What a later commit changed: PostgreSQL answers as it read it ahead (one request's
    // snapshot); SQLite reads through its cache as the reads come, so it sees the commit.
    await store.transaction(async (tx) => {
      await tx.put('organizations', doc('o1', { name: 'renamed' }) as never)
      await tx.put('pluginRows', row('s', {}, 'none'))
      await tx.put('users', doc('u8', { organizationId: 'o8' }) as never)
    })
    const ahead = name === 'PostgreSQL'
    expect((await reads.get('organizations', 'o1')) as unknown).toMatchObject({
      name: ahead ? 'one' : 'renamed',
    })
    expect((await reads.findBy('pluginRows', 'kind', 'none')).map((r) => r.id)).toEqual(ahead ? [] : ['s'])
    // Whether there are rows, as the reads would say (parsing none where they were read ahead).
    expect(await anyRows(reads, 'pluginRows', 'kind', 'none')).toBe(!ahead)
    expect(await anyRows(reads, 'apiKeys', 'publicKey', 'p')).toBe(true)
    expect(await anyRows(reads, 'pluginRows', 'kind', 'test')).toBe(true)
    expect(await anyRows(reads, 'pluginRows', 'kind', 'nothing')).toBe(false)
    expect(await anyRows(store, 'apiKeys', 'publicKey', 'p')).toBe(true)
    expect((await reads.findBy('users', 'organizationId', 'o8')).map((u) => u.id)).toEqual(
      ahead ? [] : ['u8'],
    )
    // ... and anything it was not asked for goes to the store.
    expect((await reads.get('users', 'u9'))?.id).toBe('u9')
    expect((await reads.get('pluginRows', 'r'))?.data).toEqual({ n: 1 })
    expect((await reads.findBy('pluginRows', 'kind', 'test')).map((r) => r.id)).toEqual(['r'])
    expect(await reads.count('apiKeys', 'publicKey', 'p')).toBe(2)
    // Each read is the caller's own copy.
    const mine = (await reads.findBy('apiKeys', 'publicKey', 'p'))[0]!
    mine.userId = 'someone else'
    expect((await reads.findBy('apiKeys', 'publicKey', 'p'))[0]!.userId).toBe('u1')
    await expect(store.prefetch([{ table: 'wallets', field: 'name', value: 'x' }])).rejects.toThrow(
      /no index/,
    )
    expect(await (await store.prefetch([])).get('users', 'u1')).toBeDefined()
    await store.close()
  })

  it('a snapshot run reads its snapshot, inserts all or nothing, and reruns as a transaction when it must', async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('a', { n: 1 }))
    })
    const ahead = name === 'PostgreSQL'
    const snapshot = () => store.prefetch([{ table: 'pluginRows', field: 'kind', value: 'test' }])
    const attempts: number[] = []
    // Reads come from the snapshot, writes land together; a savepoint rolled back drops what followed it.
    const reads = await snapshot()
    await store.transaction(
      async (tx) => {
        attempts.push(tx.attempt)
        expect((await tx.findBy('pluginRows', 'kind', 'test')).map((r) => r.id)).toEqual(['a'])
        await tx.put('pluginRows', row('b', { n: 2 }))
        const mark = tx.lazySavepoint()
        await tx.put('pluginRows', row('dropped'))
        await mark.rollback()
        await tx.put('pluginRows', row('c', { n: 3 }))
      },
      { snapshot: reads },
    )
    expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id)).toEqual(['a', 'b', 'c'])
    expect(attempts).toEqual([1])
    // A read the snapshot does not hold (caught or not) reruns the function in a transaction.
    attempts.length = 0
    await store.transaction(
      async (tx) => {
        attempts.push(tx.attempt)
        await tx.put('pluginRows', row('d'))
        await tx.get('pluginRows', 'a').catch(() => undefined)
      },
      { snapshot: await snapshot() },
    )
    expect(attempts).toEqual(ahead ? [1, 1] : [1])
    expect(await store.get('pluginRows', 'd')).toBeDefined()
    // An insert that meets an existing row writes nothing and reruns; the rerun sees the row.
    attempts.length = 0
    const seen: string[][] = []
    await store.transaction(
      async (tx) => {
        attempts.push(tx.attempt)
        seen.push((await tx.findBy('pluginRows', 'kind', 'test')).map((r) => r.id))
        await tx.put('pluginRows', row('e'))
        await tx.put('pluginRows', row('a', { n: 9 }))
      },
      { snapshot: reads },
    )
    expect(attempts).toEqual(ahead ? [1, 2] : [1])
    // The first run read the snapshot as it was read; the first run inserted neither row (the
    // rerun did not find `e`), the rerun overwrote `a` and wrote `e` in its transaction.
    expect(seen).toEqual(ahead ? [['a'], ['a', 'b', 'c', 'd']] : [['a', 'b', 'c', 'd']])
    expect((await store.get('pluginRows', 'a'))?.data).toEqual({ n: 9 })
    expect(await store.get('pluginRows', 'e')).toBeDefined()
    await store.close()
  })

  it('40 concurrent read-modify-write increments of one row lose none', async () => {
    const store = await open()
    await store.transaction((tx) => tx.put('pluginRows', row('counter', { n: 0 })))
    await Promise.all(
      Array.from({ length: 40 }, () =>
        store.transaction(async (tx) => {
          const current = (await tx.get('pluginRows', 'counter'))!
          await tx.put('pluginRows', { ...current, data: { n: (current.data.n as number) + 1 } })
        }),
      ),
    )
    expect((await store.get('pluginRows', 'counter'))!.data).toEqual({ n: 40 })
    await store.close()
  })

  it('snapshot isolation under a lock: concurrent increments lose none and rerun none; a lock taken inside reruns, loses none', async () => {
    const store = await open()
    let reruns = 0
    store.observe({ emit: (name) => void (name === 'store.retry' && reruns++) })
    await store.transaction((tx) => tx.put('pluginRows', row('counter', { n: 0 })))
    const increment = async (tx: Transaction) => {
      const current = (await tx.get('pluginRows', 'counter'))!
      await tx.put('pluginRows', { ...current, data: { n: (current.data.n as number) + 1 } })
    }
    // The lock taken before `begin`: each snapshot follows the last holder's commit.
    await Promise.all(
      Array.from({ length: 30 }, () =>
        store.transaction(increment, { locks: ['counter'], isolation: 'snapshot' }),
      ),
    )
    expect((await store.get('pluginRows', 'counter'))!.data).toEqual({ n: 30 })
    expect(reruns).toBe(0)
    // Taken inside, after a first read took the snapshot: a stale one conflicts and reruns, never overwrites.
    await Promise.all([
      ...Array.from({ length: 8 }, () =>
        store.transaction(
          async (tx) => {
            await tx.get('pluginRows', 'other')
            await tx.lock('counter')
            // Only where the database has such locks (SQLite runs one transaction at a time).
            expect(tx.holds('counter')).toBe(name === 'PostgreSQL')
            await increment(tx)
          },
          { isolation: 'snapshot' },
        ),
      ),
      ...Array.from({ length: 8 }, () =>
        store.transaction(increment, { locks: ['counter'], isolation: 'snapshot' }),
      ),
    ])
    expect((await store.get('pluginRows', 'counter'))!.data).toEqual({ n: 46 })
    await store.close()
  })

  it('transactions queued for one lock commit as one group (PostgreSQL too): each reads ahead what those before it wrote; one that throws undoes only its own writes', async () => {
    const store = await open()
    let reruns = 0
    store.observe({ emit: (event) => void (event === 'store.retry' && reruns++) })
    await store.transaction((tx) => tx.put('pluginRows', row('counter', { n: 0 })))
    const before = store.batching().commits
    // As limited signings of one organization: a snapshot under its lock, reading ahead the row
    // every one of them rewrites.
    const options = {
      isolation: 'snapshot' as const,
      locks: ['group'],
      readAhead: [{ table: 'pluginRows' as const, id: 'counter' }],
    }
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        store.transaction(async (tx) => {
          const counter = (await tx.get('pluginRows', 'counter'))!
          await tx.put('pluginRows', { ...counter, data: { n: (counter.data.n as number) + 1 } })
          await tx.put('pluginRows', row(`g${i}`, { i }))
          if (i % 3 === 1) throw new Error(`transaction ${i} failed`)
          return i
        }, options),
      ),
    )
    for (const [i, result] of results.entries())
      if (i % 3 === 1)
        expect(result).toEqual({ status: 'rejected', reason: new Error(`transaction ${i} failed`) })
      else expect(result).toEqual({ status: 'fulfilled', value: i })
    // Each of the 20 that resolved counted once, each of the 10 that threw not at all.
    expect((await store.get('pluginRows', 'counter'))!.data).toEqual({ n: 20 })
    const kept = (await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id).sort()
    expect(kept).toEqual(
      [
        'counter',
        ...Array.from({ length: 30 }, (_, i) => i)
          .filter((i) => i % 3 !== 1)
          .map((i) => `g${i}`),
      ].sort(),
    )
    // All 30 queued in one turn: one group, one commit (a throw reruns its group's transactions
    // alone, inside it), none rerun by the store.
    expect(commitsSince(store, before)).toEqual({ items: 30, batches: 1 })
    expect(reruns).toBe(0)
    await store.close()
  })

  it('a group that reads ahead reads once and writes once: each transaction sees what those before it and it itself wrote, in id order; a savepoint rolled back hides what followed it', async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('counter', { n: 0 }))
      await tx.put('pluginRows', row('m00', { moved: false }, 'listed'))
    })
    const before = store.batching().commits
    const options = {
      isolation: 'snapshot' as const,
      locks: ['shared'],
      readAhead: [
        { table: 'pluginRows' as const, id: 'counter' },
        { table: 'pluginRows' as const, field: 'kind', value: 'listed' },
      ],
    }
    const seen: string[][] = []
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.transaction(async (tx) => {
          const counter = (await tx.get('pluginRows', 'counter'))!
          await tx.put('pluginRows', { ...counter, data: { n: (counter.data.n as number) + 1 } })
          // Ids written out of order: the reads still answer in id order.
          const id = `m${String(12 - i).padStart(2, '0')}`
          await tx.put('pluginRows', row(id, { by: i }, 'listed'))
          // One written, then undone: no one sees it, nor is it stored.
          const savepoint = tx.lazySavepoint()
          await tx.put('pluginRows', row(`undone${i}`, {}, 'listed'))
          await savepoint.rollback()
          // The first one moves the row that was there to another kind: it is listed no more.
          if (i === 0) {
            const moved = (await tx.get('pluginRows', 'm00'))!
            await tx.put('pluginRows', { ...moved, kind: 'moved' })
          }
          seen.push((await tx.findBy('pluginRows', 'kind', 'listed')).map((r) => r.id))
          expect((await tx.get('pluginRows', 'counter'))!.data).toEqual({ n: i + 1 })
        }, options),
      ),
    )
    // The first found only its own; the i-th, its own and those of the i before it.
    expect(seen).toEqual(
      Array.from({ length: 12 }, (_, i) =>
        Array.from({ length: i + 1 }, (_, k) => `m${String(12 - i + k).padStart(2, '0')}`),
      ),
    )
    expect((await store.get('pluginRows', 'counter'))!.data).toEqual({ n: 12 })
    expect((await store.findBy('pluginRows', 'kind', 'listed')).map((r) => r.id)).toEqual(seen[11])
    expect((await store.findBy('pluginRows', 'kind', 'moved')).map((r) => r.id)).toEqual(['m00'])
    expect(await store.get('pluginRows', 'undone3')).toBeUndefined()
    if (name === 'PostgreSQL') expect(commitsSince(store, before).batches).toBe(1)
    await store.close()
  })

  it('in a group that reads ahead, rows others wrote that a lookup neither found nor finds leave its answer as read; a found row rewritten, or one that now matches, is read as written', async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('l1', { v: 0 }, 'listed'))
      await tx.put('pluginRows', row('o1', {}, 'other'))
    })
    const options = {
      isolation: 'snapshot' as const,
      locks: ['shared'],
      readAhead: [
        { table: 'pluginRows' as const, field: 'kind', value: 'listed' },
        { table: 'pluginRows' as const, field: 'kind', value: 'other' },
        { table: 'pluginRows' as const, id: 'o1' },
      ],
    }
    const before = store.batching().commits
    const listed = async (tx: Transaction) =>
      (await tx.findBy('pluginRows', 'kind', 'listed')).map((r) => [r.id, r.data.v])
    const seen: unknown[] = []
    await Promise.all([
      store.transaction(async (tx) => {
        await tx.put('pluginRows', row('o2', {}, 'other'))
        seen.push(await listed(tx))
      }, options),
      store.transaction(async (tx) => {
        seen.push(await listed(tx))
        await tx.put('pluginRows', row('l1', { v: 1 }, 'listed'))
        seen.push(await listed(tx))
      }, options),
      store.transaction(async (tx) => {
        seen.push(await listed(tx))
        seen.push((await tx.findBy('pluginRows', 'kind', 'other')).map((r) => r.id))
        await tx.put('pluginRows', row('l0', { v: 2 }, 'listed'))
        seen.push(await listed(tx))
        seen.push((await tx.get('pluginRows', 'o1'))?.kind)
      }, options),
    ])
    expect(seen).toEqual([
      [['l1', 0]],
      [['l1', 0]],
      [['l1', 1]],
      [['l1', 1]],
      ['o1', 'o2'],
      [
        ['l0', 2],
        ['l1', 1],
      ],
      'other',
    ])
    // One group, so each read above was answered from the group's one read ahead.
    if (name === 'PostgreSQL') expect(commitsSince(store, before).batches).toBe(1)
    await store.close()
  })

  it('the next group of a lock forms while the one before it commits (PostgreSQL): it still reads what that one wrote, in order, losing nothing', async () => {
    const store = await open()
    await store.transaction((tx) => tx.put('pluginRows', row('chain', { n: 0, order: [] })))
    const options = {
      isolation: 'snapshot' as const,
      locks: ['chain'],
      readAhead: [{ table: 'pluginRows' as const, id: 'chain' }],
    }
    const ran: number[] = []
    const submit = (i: number) =>
      store.transaction(async (tx) => {
        const chain = (await tx.get('pluginRows', 'chain'))!
        const { n, order } = chain.data as { n: number; order: number[] }
        if (tx.attempt === 1) ran.push(i)
        await tx.put('pluginRows', { ...chain, data: { n: n + 1, order: [...order, i] } })
      }, options)
    // Waves queued while the groups before them run and commit.
    const pending: Promise<unknown>[] = []
    for (let wave = 0; wave < 8; wave++) {
      for (let k = 0; k < 6; k++) pending.push(submit(wave * 6 + k))
      await new Promise((resolve) => setTimeout(resolve, 3))
    }
    await Promise.all(pending)
    const { n, order } = (await store.get('pluginRows', 'chain'))!.data as { n: number; order: number[] }
    expect(n).toBe(48)
    // Each read what every one before it wrote, in the order they came.
    expect(order).toEqual(Array.from({ length: 48 }, (_, i) => i))
    expect(ran).toEqual(order)
    await store.close()
  })

  it.skipIf(name !== 'PostgreSQL')(
    'a group that follows another on its connection (a chain) decides on what that one wrote; when that one fails, it runs again, first in line, and nothing is counted twice',
    async () => {
      // A chain keeps its locks for 100 ms; this test holds its first group open at a gate for
      // longer than that on a loaded machine (its timers late), when no follower would form.
      const store = await open({ lockChainMs: 60_000 })
      await store.transaction((tx) => tx.put('pluginRows', row('tally', { n: 0, order: [] })))
      const options = {
        isolation: 'snapshot' as const,
        locks: ['tally'],
        readAhead: [{ table: 'pluginRows' as const, id: 'tally' }],
      }
      let open_: () => void = () => {}
      const gate = new Promise<void>((resolve) => {
        open_ = resolve
      })
      // Counts itself into the tally; with a fingerprint, records an activity (unique by it), and
      // a rerun that finds its fingerprint answers that it was a replay and counts nothing.
      const count = (i: number, fingerprint?: string, wait = gate) =>
        store.transaction(async (tx) => {
          if (fingerprint && tx.attempt > 1) {
            const [replay] = await tx.findBy('activities', 'fingerprint', fingerprint)
            if (replay) return 'replay'
          }
          await wait
          const tally = (await tx.get('pluginRows', 'tally'))!
          const { n, order } = tally.data as { n: number; order: number[] }
          await tx.put('pluginRows', { ...tally, data: { n: n + 1, order: [...order, i] } })
          if (fingerprint) await tx.put('activities', activityRow(`act${i}`, fingerprint))
          return 'counted'
        }, options)
      const followedBefore = store.batching().commits!.followed!
      const abandonedBefore = store.batching().commits!.abandoned!
      // 1. A chain: the first group waits at the gate while six more queue for its lock; they
      // follow it on its connection, reading the tally it left, not the database.
      const first = count(0)
      await new Promise((resolve) => setTimeout(resolve, 20))
      const queued = Array.from({ length: 6 }, (_, k) => count(1 + k))
      await new Promise((resolve) => setTimeout(resolve, 20))
      open_()
      expect(await Promise.all([first, ...queued])).toEqual(Array(7).fill('counted'))
      expect(store.batching().commits!.followed).toBeGreaterThan(followedBefore)
      let tally = (await store.get('pluginRows', 'tally'))!.data as { n: number; order: number[] }
      expect(tally).toEqual({ n: 7, order: [0, 1, 2, 3, 4, 5, 6] })
      // 2. The first group's write fails (two activities with one fingerprint) after six more
      // formed a follower on the tally it would have left: the follower is rolled back and runs
      // again after the group's transactions reran alone (the second finding the first's row).
      let reopen: () => void = () => {}
      const shut = new Promise<void>((resolve) => {
        reopen = resolve
      })
      const twins = [count(10, 'twin', shut), count(11, 'twin', shut)]
      await new Promise((resolve) => setTimeout(resolve, 20))
      const after = Array.from({ length: 6 }, (_, k) => count(12 + k))
      await new Promise((resolve) => setTimeout(resolve, 20))
      reopen()
      expect(await Promise.all([...twins, ...after])).toEqual([
        'counted',
        'replay',
        ...Array(6).fill('counted'),
      ])
      tally = (await store.get('pluginRows', 'tally'))!.data as { n: number; order: number[] }
      expect(tally).toEqual({ n: 14, order: [0, 1, 2, 3, 4, 5, 6, 10, 12, 13, 14, 15, 16, 17] })
      expect(store.batching().commits!.abandoned).toBeGreaterThan(abandonedBefore)
      await store.close()
    },
  )

  it('transactions of different locks share a group and those of one lock keep their order; two stores whose groups take overlapping locks neither deadlock nor lose an increment', async () => {
    const store = await open()
    // PostgreSQL: a second store on the same database, as a second instance of the service.
    const other =
      name === 'PostgreSQL'
        ? await openPostgres(cluster!.url.replace(/\/[^/]*$/, `/contract_${database}`), { max: 12 })
        : undefined
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4']
    await store.transaction(async (tx) => {
      for (const key of keys) await tx.put('pluginRows', row(key, { n: 0 }))
    })
    const before = store.batching().commits
    const expected = new Map(keys.map((key) => [key, 0]))
    const order = new Map<string, number[]>(keys.map((key) => [key, []]))
    const submit = (target: Store, i: number, locks: string[], log: boolean) => {
      for (const key of locks) expected.set(key, expected.get(key)! + 1)
      return target.transaction(
        async (tx) => {
          for (const key of locks) {
            if (log && tx.attempt === 1) order.get(key)!.push(i)
            const counter = (await tx.get('pluginRows', key))!
            await tx.put('pluginRows', { ...counter, data: { n: (counter.data.n as number) + 1 } })
          }
        },
        {
          isolation: 'snapshot',
          locks,
          readAhead: locks.map((key) => ({ table: 'pluginRows' as const, id: key })),
        },
      )
    }
    // Some take two locks, in either order as named (the store sorts them).
    const locksOf = (i: number, shift: number) => {
      const first = keys[(i * 3 + shift) % 5]!
      return i % 4 === 0
        ? [keys[(i + 2 + shift) % 5]!, first].filter((k, n, all) => all.indexOf(k) === n)
        : [first]
    }
    await Promise.all([
      ...Array.from({ length: 40 }, (_, i) => submit(store, i, locksOf(i, 0), true)),
      ...(other ? Array.from({ length: 40 }, (_, i) => submit(other, i, locksOf(i, 1), false)) : []),
    ])
    for (const key of keys) {
      expect((await store.get('pluginRows', key))!.data).toEqual({ n: expected.get(key) })
      // This store's transactions of one lock ran in the order they came.
      const ran = order.get(key)!
      expect(ran).toEqual([...ran].sort((a, b) => a - b))
    }
    if (name === 'PostgreSQL') {
      // Queued in one turn, the 40 over 5 locks go in far fewer groups than transactions (each
      // group takes its share of the locks waiting and every transaction of them that can go).
      const since = commitsSince(store, before)
      expect(since.items).toBe(40)
      expect(since.batches).toBeLessThan(20)
    }
    await other?.close()
    await store.close()
  })

  it.each([
    ['each sends its writes', false],
    ['the group reads once and writes once', true],
  ])(
    'a replay inside a group (its unique row inserted by one before it) reruns, finds that row and commits nothing of its own; the others commit (%s)',
    async (_, shared) => {
      const store = await open()
      const before = store.batching().commits
      // As `submitActivity`'s `record`: a rerun looks for its fingerprint first.
      const submit = (id: string, fingerprint: string) =>
        store.transaction(
          async (tx) => {
            if (tx.attempt > 1) {
              const [replay] = await tx.findBy('activities', 'fingerprint', fingerprint)
              if (replay) return replay.id
            }
            await tx.put('pluginRows', row(`spent by ${id}`))
            await tx.put('activities', activityRow(id, fingerprint))
            return id
          },
          {
            isolation: 'snapshot',
            locks: ['replays'],
            // Shared: the unique violation is the group's one write, and the commit behind it rolls back.
            ...(shared
              ? { readAhead: [{ table: 'activities' as const, field: 'fingerprint', value: fingerprint }] }
              : {}),
          },
        )
      const answers = await Promise.all([
        submit('a', 'first'),
        submit('b', 'second'),
        submit('c', 'first'),
        submit('d', 'third'),
      ])
      // On PostgreSQL the group reruns its transactions alone, in order, so the first one's row is
      // the one kept; on SQLite the whole group is rerun by the store, whichever comes first.
      const first = name === 'PostgreSQL' ? 'a' : answers[0]!
      expect(answers).toEqual([first, 'b', first, 'd'])
      expect((await store.all('activities')).map((r) => r.id).sort()).toEqual([first, 'b', 'd'].sort())
      expect((await store.findBy('pluginRows', 'kind', 'test')).map((r) => r.id).sort()).toEqual(
        [`spent by ${first}`, 'spent by b', 'spent by d'].sort(),
      )
      if (name === 'PostgreSQL') expect(commitsSince(store, before).batches).toBe(1)
      await store.close()
    },
  )

  it('"check then insert" races: 30 concurrent spends of one id succeed exactly once', async () => {
    const store = await open()
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        store.transaction(async (tx) => {
          if (await tx.get('pluginRows', 'spent:token')) throw new Error('already spent')
          await tx.put('pluginRows', row('spent:token', { by: i }))
        }),
      ),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/already spent/)
    await store.close()
  })

  it('"none may exist" predicates race safely: 20 concurrent claims of one kind make one row', async () => {
    const store = await open()
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        store.transaction(async (tx) => {
          if ((await tx.findBy('pluginRows', 'kind', 'claim')).length > 0) throw new Error('taken')
          await tx.put('pluginRows', row(`claim-${i}`, {}, 'claim'))
        }),
      ),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(await store.count('pluginRows', 'kind', 'claim')).toBe(1)
    await store.close()
  })

  it('an activity fingerprint is unique in the database', async () => {
    const store = await open()
    const activity = (id: string) => ({
      id,
      organizationId: 'org',
      path: 'create_wallet',
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      status: 'ACTIVITY_STATUS_COMPLETED' as const,
      intent: {},
      fingerprint: 'same',
      userId: 'u',
      credentialId: 'c',
      callerOrganizationId: 'org',
      createdAt: 1,
      updatedAt: 1,
    })
    await store.transaction((tx) => tx.put('activities', activity('one')))
    await expect(store.transaction((tx) => tx.put('activities', activity('two')))).rejects.toThrow()
    expect(await store.findBy('activities', 'fingerprint', 'same')).toHaveLength(1)
    await store.close()
  })

  it('a stored row that does not parse is a 503 naming its table and id, logged without its content', async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      await tx.put('pluginRows', row('a', { secret: 'kept-private' }))
      await tx.put('pluginRows', row('b', { n: 2 }))
    })
    // Read once so a caching backend holds the good document: the damage must still be seen.
    expect((await store.get('pluginRows', 'b'))?.data).toEqual({ n: 2 })
    // Damage the row behind the store's back, as a bad disk or a hand edit would, then let the
    // store forget what it read (a commit to the table does).
    await sql`update ${sql.table('pluginRows')} set data = ${'{"id":"b","kind":"test","data":{"n":2'} where id = ${'b'}`.execute(
      kyselyOf(store),
    )
    await store.transaction((tx) => tx.put('pluginRows', row('c')))
    const logged: string[] = []
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(' '))
    })
    try {
      const damaged = { errorCode: 'STORAGE_UNAVAILABLE', status: 503 }
      for (const read of [
        () => store.get('pluginRows', 'b'),
        () => store.findBy('pluginRows', 'kind', 'test'),
        () => store.all('pluginRows'),
        () => store.transaction((tx) => tx.get('pluginRows', 'b')),
        async () =>
          (await store.prefetch([{ table: 'pluginRows', field: 'kind', value: 'test' }])).findBy(
            'pluginRows',
            'kind',
            'test',
          ),
        async () => (await store.prefetch([{ table: 'pluginRows', id: 'b' }])).get('pluginRows', 'b'),
      ]) {
        const error = await read().then(
          () => undefined,
          (thrown: unknown) => thrown,
        )
        expect(error).toMatchObject(damaged)
        expect((error as Error).message).toMatch(/pluginRows row b\b/)
      }
      expect(logged.length).toBeGreaterThanOrEqual(6)
      for (const line of logged) {
        expect(line).toMatch(/pluginRows row b\b/)
        expect(line).not.toContain('"n":2')
      }
      // The rows around it still read.
      expect((await store.get('pluginRows', 'a'))?.data).toEqual({ secret: 'kept-private' })
    } finally {
      spy.mockRestore()
    }
    await store.close()
  })

  // The named operations share one store: each new PostgreSQL database adds to the cluster's shutdown.
  it('named operations: pages of a table (a rotation), compaction, rate-limit buckets, where the schema stands', async () => {
    const store = await open()
    await store.transaction(async (tx) => {
      for (const id of ['d', 'a', 'c', 'b', 'e']) await tx.put('pluginRows', row(id, { id }))
    })
    const walked: string[][] = []
    let afterId = ''
    for (;;) {
      const page = await store.page('pluginRows', { afterId, limit: 2 })
      if (page.length === 0) break
      walked.push(page.map((r) => r.id))
      afterId = page.at(-1)!.id
    }
    expect(walked).toEqual([['a', 'b'], ['c', 'd'], ['e']])
    // Resuming after an id that is gone still continues in order.
    expect((await store.page('pluginRows', { afterId: 'bb', limit: 10 })).map((r) => r.data)).toEqual([
      { id: 'c' },
      { id: 'd' },
      { id: 'e' },
    ])
    await expect(store.page('pluginRows', { afterId: '', limit: 0 })).rejects.toThrow(/at least one row/)

    // SQLite rewrites its files (the old document leaves them); PostgreSQL says it did not.
    await store.transaction((tx) => tx.put('pluginRows', row('a', { secret: 'new' })))
    expect(await store.compact()).toBe(name !== 'PostgreSQL')
    expect((await store.get('pluginRows', 'a'))?.data).toEqual({ secret: 'new' })

    // Rate-limit buckets: a burst is let in, the next charge is refused until its interval passes.
    const charge = (key: string) => ({ key, intervalMs: 100, toleranceMs: 200 })
    const now = 1_000_000
    const allowed = async (at: number, ...keys: string[]) =>
      (await store.chargeBuckets(keys.map(charge), at)).map((bucket) => [bucket.key, bucket.allowed])
    // A burst of 3 (tolerance: 2 intervals) on `a`, while `b` is charged beside it.
    expect(await allowed(now, 'b', 'a')).toEqual([
      ['a', true],
      ['b', true],
    ])
    expect(await allowed(now, 'a')).toEqual([['a', true]])
    expect(await allowed(now, 'a')).toEqual([['a', true]])
    const refused = await store.chargeBuckets([charge('a'), charge('b')], now)
    expect(refused).toEqual([
      { key: 'a', tat: now + 300, allowed: false },
      { key: 'b', tat: now + 200, allowed: true },
    ])
    // A refused charge is not charged: one interval later exactly one more is let in.
    expect(await allowed(now + 99, 'a')).toEqual([['a', false]])
    expect(await allowed(now + 100, 'a')).toEqual([['a', true]])
    expect(await allowed(now + 100, 'a')).toEqual([['a', false]])
    // Long idle, a bucket starts again from now, and the sweep drops it.
    expect(await store.chargeBuckets([charge('a')], now + 10_000)).toEqual([
      { key: 'a', tat: now + 10_100, allowed: true },
    ])
    await store.sweepBuckets(now + 10_000)
    expect(
      (await sql<{ key: string }>`select "key" from "rateLimitBuckets"`.execute(kyselyOf(store))).rows,
    ).toEqual([{ key: 'a' }])

    // Charges at once are decided one by one: 30 concurrent charges of a burst of 5 let 5 in.
    const results = await Promise.all(
      Array.from({ length: 30 }, () =>
        store.chargeBuckets([{ key: 'hot', intervalMs: 60_000, toleranceMs: 4 * 60_000 }], 5_000),
      ),
    )
    expect(results.filter(([bucket]) => bucket!.allowed)).toHaveLength(5)

    const state = await store.migrationState()
    expect(state.current).toBe(true)
    expect(state.applied).toEqual([...state.known].sort())
    // A newer version migrated the database meanwhile.
    await sql`insert into ${sql.table('kysely_migration')} (name, timestamp) values (${'9999_from_the_future'}, ${new Date().toISOString()})`.execute(
      kyselyOf(store),
    )
    const ahead = await store.migrationState()
    expect(ahead.current).toBe(false)
    expect(ahead.applied).toContain('9999_from_the_future')
    await store.close()
    await expect(store.migrationState()).rejects.toMatchObject({ errorCode: 'STORAGE_UNAVAILABLE' })
  })

  it('a closed store answers 503 STORAGE_UNAVAILABLE', async () => {
    const store = await open()
    await store.close()
    await expect(store.get('pluginRows', 'x')).rejects.toMatchObject({ errorCode: 'STORAGE_UNAVAILABLE' })
  })
})

describe('PostgreSQL connections', () => {
  beforeAll(async () => {
    cluster ??= await startPostgres()
  }, 300_000)

  /**
   * A store on a fresh database that gives up on a statement after 300 ms, holding one row
   * (`kept`), and another session on the same database, connected.
   */
  async function impatientStore() {
    const name = `contract_${++database}`
    cluster!.psql(`create database ${name}`)
    const url = cluster!.url.replace(/\/[^/]*$/, `/${name}`)
    const store = await openPostgres(url, { max: 4, queryTimeoutMs: 300 })
    await store.transaction((tx) => tx.put('pluginRows', row('kept')))
    const holder = new pg.Client({ connectionString: url })
    await holder.connect()
    return { store, holder, name }
  }

  it('send the statements queued on them at once (pipelined): pg never warns of a query queued behind another, which pg@9 refuses', async () => {
    const store = await backends[2]![1]()
    // A lock group queues its lock, begin and read ahead on its connection at once, and its write,
    // commit and unlock; a follower's begin goes behind that commit.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.transaction((tx) => tx.put('pluginRows', row(`p${i}`)), {
          isolation: 'snapshot',
          locks: ['pipelined'],
          readAhead: [{ table: 'pluginRows', id: `p${i}` }],
        }),
      ),
    )
    expect(await store.count('pluginRows', 'kind', 'test')).toBe(20)
    // Over the whole file: pg warns once a process, and the contract's lock groups ran first.
    expect(warnings.filter((message) => message.includes('already executing a query'))).toEqual([])
    await store.close()
  })

  it('a statement the database leaves unanswered past the query timeout is a 503, its connection dropped and the store back once the database answers', async () => {
    const { store, holder } = await impatientStore()
    const events: [string, unknown][] = []
    store.observe({ emit: (name, data) => events.push([name, data]) })
    // Another session holds the table: every statement on it waits, as on a wedged server.
    try {
      await holder.query('begin')
      await holder.query('lock table "pluginRows" in access exclusive mode')
      const unavailable = { errorCode: 'STORAGE_UNAVAILABLE', status: 503 }
      // A read on its own, a read ahead, and a transaction: each a 503, not a 500 or a hang.
      await expect(store.get('pluginRows', 'kept')).rejects.toMatchObject(unavailable)
      await expect(store.prefetch([{ table: 'pluginRows', id: 'kept' }])).rejects.toMatchObject(unavailable)
      await expect(store.transaction((tx) => tx.put('pluginRows', row('waited')))).rejects.toMatchObject(
        unavailable,
      )
      // The operator's log says why; the client is told only to try again.
      expect(events).toEqual([['store.unavailable', { cause: 'Query read timeout' }]])
      await holder.query('rollback')
      expect((await store.get('pluginRows', 'kept'))?.id).toBe('kept')
    } finally {
      await holder.end()
      await store.close()
    }
  })

  it('a request that waits longer than 3 s for a connection of a busy pool is served once one frees, not answered 503; the wait is bounded (`connectionWaitMs`)', async () => {
    // A burst on a loaded host: every connection busy for seconds, nothing wrong with the
    // database. The pool once gave up after 3 s (its bound on opening a connection bounded the
    // wait for a free one too), and a lock group waiting behind each request's own transaction
    // answered all its signings 503 (limitsAcrossInstances.test.ts, "150 signatures at once").
    const name = `contract_${++database}`
    cluster!.psql(`create database ${name}`)
    const url = cluster!.url.replace(/\/[^/]*$/, `/${name}`)
    /** The pool's one connection, held by a transaction for `ms`: once it holds it, its end. */
    const hold = async (store: Store, ms: number) => {
      let holding!: () => void
      const held = new Promise<void>((resolve) => {
        holding = resolve
      })
      const done = store.transaction(async (tx) => {
        await tx.get('pluginRows', 'kept')
        holding()
        await new Promise((resolve) => setTimeout(resolve, ms))
      })
      await held
      return { done }
    }
    const patient = await openPostgres(url, { max: 1 })
    try {
      await patient.transaction((tx) => tx.put('pluginRows', row('kept')))
      const holder = await hold(patient, 4_500)
      const started = Date.now()
      expect((await patient.get('pluginRows', 'kept'))?.id).toBe('kept')
      expect(Date.now() - started).toBeGreaterThan(3_500)
      await holder.done
    } finally {
      await patient.close()
    }
    // Past its bound, the wait is a 503 naming why in the log.
    const bounded = await openPostgres(url, { max: 1, connectionWaitMs: 3_000 })
    const events: [string, unknown][] = []
    bounded.observe({ emit: (event, data) => events.push([event, data]) })
    try {
      const holder = await hold(bounded, 4_500)
      await expect(bounded.transaction((tx) => tx.get('pluginRows', 'kept'))).rejects.toMatchObject({
        errorCode: 'STORAGE_UNAVAILABLE',
        status: 503,
      })
      expect(events).toEqual([['store.unavailable', { cause: 'timeout exceeded when trying to connect' }]])
      await holder.done
    } finally {
      await bounded.close()
    }
  }, 30_000)

  it('a server that takes the connection but never answers it fails the connect after 3 s: the database cannot be reached, however long a request may wait for a busy pool', async () => {
    const silent = createServer(() => undefined)
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as AddressInfo
    const started = Date.now()
    try {
      await expect(openPostgres(`postgres://postgres@127.0.0.1:${port}/silent`, { max: 1 })).rejects.toThrow(
        // The client's own bound, or the pool's (at least as long) where both end at 3 s.
        /^the database cannot be reached: (timeout expired|Connection terminated due to connection timeout)$/,
      )
      expect(Date.now() - started).toBeLessThan(6_000)
    } finally {
      silent.close()
    }
  }, 30_000)

  it('a lock group that gives up waiting for a lock another session holds leaves no backend waiting behind it, so a stuck holder cannot use up the database connections', async () => {
    const { store, holder, name } = await impatientStore()
    // A session that took an organization's spend lock and stopped (a frozen process on a live connection).
    const waiting = async () =>
      Number(
        (
          await holder.query(
            `select count(*) as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
            [name],
          )
        ).rows[0].n,
      )
    try {
      await holder.query(`select pg_advisory_lock(hashtext('spend:frozen'))`)
      const attempts = Array.from({ length: 3 }, (_, i) =>
        store.transaction((tx) => tx.put('pluginRows', row(`w${i}`)), {
          isolation: 'snapshot',
          locks: ['spend:frozen'],
          readAhead: [{ table: 'pluginRows', id: `w${i}` }],
        }),
      )
      for (const attempt of attempts)
        await expect(attempt).rejects.toMatchObject({ errorCode: 'STORAGE_UNAVAILABLE', status: 503 })
      // The connections it dropped: their backends notice within a second and end, rather than
      // wait for the lock (and hold a connection slot) until the holder lets go.
      const deadline = Date.now() + 5_000
      while ((await waiting()) > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100))
      expect(await waiting()).toBe(0)
      await holder.query(`select pg_advisory_unlock(hashtext('spend:frozen'))`)
      // Nothing they would have written was written once the lock was free.
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(await store.count('pluginRows', 'kind', 'test')).toBe(1)
    } finally {
      await holder.end()
      await store.close()
    }
  })

  it("a process that stops in the middle of a transaction holding an organization's spend lock (frozen, its host alive) has its session ended, so the organization's signings on the other instances go on", async () => {
    const { store: waiter, holder: observer, name } = await impatientStore()
    const frozenStore = await openPostgres(cluster!.url.replace(/\/[^/]*$/, `/${name}`), {
      max: 2,
      stuckSessionMs: 500,
    })
    let thaw!: () => void
    const thawed = new Promise<void>((resolve) => {
      thaw = resolve
    })
    let holding!: () => void
    const held = new Promise<void>((resolve) => {
      holding = resolve
    })
    try {
      // Its transaction took the lock, wrote, and waits on nothing the database can see.
      const frozen = frozenStore.transaction(
        async (tx) => {
          await tx.put('pluginRows', row('frozen'))
          holding()
          await thawed
        },
        { isolation: 'snapshot', locks: ['spend:org'], readAhead: [{ table: 'pluginRows', id: 'frozen' }] },
      )
      await held
      // Another instance's signing of the organization gets the lock once the server ends the
      // stopped session (0.5 s here; 30 s by default). This store gives up on a statement after
      // 300 ms, so it asks again until then: with the session left alive it never gets it.
      const started = Date.now()
      const waiting = async () => {
        for (;;) {
          try {
            return await waiter.transaction((tx) => tx.put('pluginRows', row('after')), {
              isolation: 'snapshot',
              locks: ['spend:org'],
              readAhead: [{ table: 'pluginRows', id: 'after' }],
            })
          } catch (error) {
            // Its statement gave up at 300 ms (a 503; the client sends it again).
            if (Date.now() - started > 10_000) throw error
          }
        }
      }
      await waiting()
      expect(Date.now() - started).toBeLessThan(10_000)
      // The stopped one's write never committed.
      expect(await waiter.get('pluginRows', 'frozen')).toBeUndefined()
      // Once it runs again, its session is gone and its transaction with it: a 503 (the client may
      // send the activity again), nothing of it committed.
      thaw()
      await expect(frozen).rejects.toMatchObject({ errorCode: 'STORAGE_UNAVAILABLE', status: 503 })
      const rows = (await waiter.findBy('pluginRows', 'kind', 'test')).map((found) => found.id).sort()
      expect(rows).toEqual(['after', 'kept'])
    } finally {
      thaw()
      await observer.end()
      await frozenStore.close()
      await waiter.close()
    }
  })

  it('a session that stops between transactions while it holds a spend lock (a lock group between groups) is ended too', async () => {
    const { store, holder } = await impatientStore()
    // The holder's session asked what the store's connections ask, with a 500 ms bound.
    const ended = new Promise<string>((resolve) =>
      holder.on('error', (error) => resolve((error as { code?: string }).code ?? '')),
    )
    try {
      await holder.query(sessionSettings(500))
      await holder.query(`select pg_advisory_lock(hashtext('spend:between'))`)
      const started = Date.now()
      for (;;) {
        try {
          await store.transaction((tx) => tx.put('pluginRows', row('after')), {
            isolation: 'snapshot',
            locks: ['spend:between'],
            readAhead: [{ table: 'pluginRows', id: 'after' }],
          })
          break
        } catch (error) {
          if (Date.now() - started > 10_000) throw error
        }
      }
      expect(await ended).toBe('57P05')
      expect((await store.get('pluginRows', 'after'))?.id).toBe('after')
    } finally {
      await holder.end().catch(() => undefined)
      await store.close()
    }
  })

  it('ask the server to probe each connection after 10 s of silence, so the session of a host that died (and any spend lock it held) ends within about 25 s', async () => {
    const store = await backends[2]![1]()
    try {
      // A loopback cluster cannot lose a host; what is checked is that every connection asked.
      const settings = await Promise.all(
        Array.from({ length: 6 }, () =>
          sql<{
            idle: string
            interval: string
            count: string
            check: string
            inTransaction: string
            idleSession: string
          }>`
            select current_setting('tcp_keepalives_idle') as idle,
              current_setting('tcp_keepalives_interval') as interval,
              current_setting('tcp_keepalives_count') as count,
              current_setting('client_connection_check_interval') as check,
              current_setting('idle_in_transaction_session_timeout') as "inTransaction",
              current_setting('idle_session_timeout') as "idleSession"`.execute(kyselyOf(store)),
        ),
      )
      for (const { rows } of settings)
        expect(rows[0]).toEqual({
          idle: '10',
          interval: '5',
          count: '3',
          check: '1s',
          inTransaction: '30s',
          idleSession: '30s',
        })
    } finally {
      await store.close()
    }
  })

  /**
   * A store on a database of its own, owned by a role of its own (what an operator may take away
   * from the service), holding the row `kept`, with the events it reports.
   */
  async function ownRole() {
    const name = `contract_${++database}`
    cluster!.psql(`create role ${name} login`)
    cluster!.psql(`create database ${name} owner ${name}`)
    const url = cluster!.url.replace(/\/\/postgres@/, `//${name}@`).replace(/\/[^/]*$/, `/${name}`)
    const store = await openPostgres(url, { max: 2 })
    const events: [string, unknown][] = []
    store.observe({ emit: (event, data) => events.push([event, data]) })
    await store.transaction((tx) => tx.put('pluginRows', row('kept')))
    return { name, url, store, events }
  }

  it('a login the database refuses (the role may no longer log in) is a 503 naming why in the log, and the store is back once it may', async () => {
    const { name, url, store, events } = await ownRole()
    try {
      cluster!.psql(`alter role ${name} nologin`)
      // Its open connections end (an operator would restart the database or wait for them).
      cluster!.psql(`select pg_terminate_backend(pid) from pg_stat_activity where usename = '${name}'`)
      const refused = async () => {
        for (let attempt = 0; attempt < 5; attempt++) {
          const error = await store.transaction((tx) => tx.get('pluginRows', 'kept')).catch((e) => e)
          const cause = (events.at(-1)?.[1] as { cause?: string } | undefined)?.cause ?? ''
          // The first attempts meet the ended connections (57P01); then the refused login.
          if (cause.startsWith('28000')) return error
        }
        throw new Error(`no refused login: ${JSON.stringify(events)}`)
      }
      expect(await refused()).toMatchObject({ errorCode: 'STORAGE_UNAVAILABLE', status: 503 })
      expect(events.at(-1)![1]).toEqual({
        cause: expect.stringMatching(/^28000 role "contract_\d+" is not permitted to log in$/),
      })
      // Starting a service on it says why, to the operator who starts it.
      await expect(openPostgres(url, { max: 1 })).rejects.toThrow(
        /^the database cannot be reached: 28000 role "contract_\d+" is not permitted to log in$/,
      )
      cluster!.psql(`alter role ${name} login`)
      expect((await store.get('pluginRows', 'kept'))?.id).toBe('kept')
    } finally {
      await store.close()
    }
  })

  it('a table the role may no longer use (a grant revoked) is a 503 naming why in the log, not a 500, and the store is back once it may', async () => {
    const { name, store, events } = await ownRole()
    const onIt = (statement: string) => cluster!.psql(statement, name)
    try {
      onIt(`revoke all on "pluginRows" from ${name}`)
      const unavailable = { errorCode: 'STORAGE_UNAVAILABLE', status: 503 }
      expect(await store.get('pluginRows', 'kept').catch((error) => error)).toMatchObject(unavailable)
      const written = store.transaction((tx) => tx.put('pluginRows', row('another')))
      expect(await written.catch((error) => error)).toMatchObject(unavailable)
      expect(events.at(-1)).toEqual([
        'store.unavailable',
        { cause: expect.stringMatching(/^42501 permission denied for table "?pluginRows"?$/) },
      ])
      onIt(`grant all on "pluginRows" to ${name}`)
      expect((await store.get('pluginRows', 'kept'))?.id).toBe('kept')
    } finally {
      await store.close()
    }
  })

  it('send what a lock group queues at once in one write to the socket: its lock, begin and read ahead; its write, commit and unlock', async () => {
    const store = await backends[2]![1]()
    const transaction = (id: string) =>
      store.transaction((tx) => tx.put('pluginRows', row(id)), {
        isolation: 'snapshot',
        locks: ['corked'],
        readAhead: [{ table: 'pluginRows', id }],
      })
    // Once first: the connection is open and its statements are prepared.
    await transaction('c0')
    // Every write to a socket meanwhile (the store's connections are this process's only sockets):
    // how many messages each carried.
    type Write = (this: Socket, ...args: unknown[]) => unknown
    const proto = Socket.prototype as unknown as { _write: Write; _writev: Write }
    const original = { _write: proto._write, _writev: proto._writev }
    const writes: number[] = []
    proto._write = function (...args) {
      writes.push(1)
      return original._write.apply(this, args)
    }
    proto._writev = function (...args) {
      writes.push((args[0] as unknown[]).length)
      return original._writev.apply(this, args)
    }
    try {
      await transaction('c1')
    } finally {
      Object.assign(proto, original)
    }
    // Lock, begin and read ahead; write, commit and unlock.
    expect(writes).toHaveLength(2)
    expect(await store.count('pluginRows', 'kind', 'test')).toBe(2)
    await store.close()
  })
})
