import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { postgresBackend } from './backends/postgresBackend.ts'
import type { Database } from './Database.ts'
import type { SpendingLimitUsageRow } from './model.ts'
import { Queries } from './Queries.ts'
import { lookupKey } from './Reads.ts'
import { SharedAhead, Transaction } from './Transaction.ts'

/**
 * A lock group's transactions read from the group's one read (`SharedAhead`) with the rows the
 * group wrote before them laid over it (issue 37: a signing under a spending limit reads its
 * organization's usage rows there, after the transactions before it in the group rewrote theirs).
 * The rows' ids come with the read (`Queries.lookupMany`'s `ids`): laying the writes over the
 * rows parses none of them for its id, so a usage row is parsed once a read, for its reader.
 */
describe('a lock group member reading what the group read, with the group’s writes over it', () => {
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  })
  const queries = new Queries(db, postgresBackend)
  const usage = (id: string, organizationId: string, total: string): SpendingLimitUsageRow => ({
    id,
    organizationId,
    spends: `1000:${total}`,
    lastAt: 1000,
    total,
    count: 1,
    createdAt: 1,
    updatedAt: 1,
  })
  const key = lookupKey({ table: 'spendingLimitUsage', field: 'organizationId', value: 'org-a' })
  /** Before it in the group: org-b's signing rewrote its own row, org-a's the first limit's. */
  const before = () => [usage('limit-9', 'org-b', '1'), usage('limit-1', 'org-a', '6')]
  /** A group's read that found org-a's two usage rows, and a transaction after `written` in it. */
  const member = (withIds: boolean, written = before()) => {
    const found = [usage('limit-1', 'org-a', '5'), usage('limit-2', 'org-a', '7')]
    const shared = new SharedAhead(
      new Map([[key, found.map((row) => JSON.stringify(row))]]),
      withIds ? new Map([[key, ['limit-1', 'limit-2']]]) : undefined,
    )
    shared.take(
      written.map((row) => queries.rowValues('spendingLimitUsage', row)),
      [],
      [],
    )
    return new Transaction({
      execute: () => {
        throw new Error('a read the group read ahead sends no statement')
      },
      backend: postgresBackend,
      queries,
      attempt: 1,
      written: new Set(['spendingLimitUsage']),
      ahead: shared.ahead,
      shared,
      defersWrites: true,
    })
  }

  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('sees the group’s writes over the rows read, and parses each row once, for its reader', async () => {
    const tx = member(true)
    const parse = vi.spyOn(JSON, 'parse')
    const rows = await tx.findBy('spendingLimitUsage', 'organizationId', 'org-a')
    expect(rows.map((row) => [row.id, row.total])).toEqual([
      ['limit-1', '6'],
      ['limit-2', '7'],
    ])
    expect(parse).toHaveBeenCalledTimes(2)
  })

  it('another organization’s rows written before it leave what was read as it was', async () => {
    const tx = member(true, [usage('limit-9', 'org-b', '1')])
    const rows = await tx.findBy('spendingLimitUsage', 'organizationId', 'org-a')
    expect(rows.map((row) => [row.id, row.total])).toEqual([
      ['limit-1', '5'],
      ['limit-2', '7'],
    ])
  })

  it('a row written before it that now matches is added in id order, one that no longer does is dropped', async () => {
    const tx = member(true, [usage('limit-0', 'org-a', '3'), usage('limit-2', 'org-b', '7')])
    const rows = await tx.findBy('spendingLimitUsage', 'organizationId', 'org-a')
    expect(rows.map((row) => [row.id, row.total])).toEqual([
      ['limit-0', '3'],
      ['limit-1', '5'],
    ])
  })

  it('without the ids (a read ahead that did not keep them), reads each row’s id from its document', async () => {
    const tx = member(false)
    const rows = await tx.findBy('spendingLimitUsage', 'organizationId', 'org-a')
    expect(rows.map((row) => [row.id, row.total])).toEqual([
      ['limit-1', '6'],
      ['limit-2', '7'],
    ])
  })
})
