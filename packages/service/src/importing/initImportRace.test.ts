// The first `latchkey_init_user_import` of an organization makes its import key. Raced on two
// instances of one PostgreSQL database, both must answer the same key: a secret encrypted to an
// answer that lost the race would never open.
import { hexToBytes } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { twoInstances } from '../../test/support/twoInstances.ts'
import { type Harness, resultOf } from '../testing/harness.ts'

let cluster: PostgresCluster
let a: Harness
let b: Harness

beforeAll(async () => {
  cluster = await startPostgres()
  ;[a, b] = await twoInstances(cluster, 'init_import_race')
}, 600_000)

afterAll(async () => {
  await a?.service.close()
  await b?.service.close()
  await cluster?.dispose()
}, 60_000)

const targetOf = (reply: Awaited<ReturnType<Harness['submit']>>) => {
  const bundle = JSON.parse(resultOf('latchkey_init_user_import', reply).importBundle) as { data: string }
  return (JSON.parse(new TextDecoder().decode(hexToBytes(bundle.data))) as { targetPublic: string })
    .targetPublic
}

describe('latchkey_init_user_import across two instances on PostgreSQL', () => {
  it('the first calls at once, on both instances, answer one import key, the one stored', async () => {
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        // Distinct requests (timestamps), so none is a replay of another.
        (i % 2 ? b : a).submit('latchkey_init_user_import', {}, { timestampMs: String(Date.now() + i) }),
      ),
    )
    expect(replies.map((reply) => reply.status)).toEqual(Array(6).fill(200))
    const stored = await a.service.store.get('importKeys', a.service.dev.organizationId)
    expect(new Set(replies.map(targetOf))).toEqual(new Set([stored!.publicKey]))
  })
})
