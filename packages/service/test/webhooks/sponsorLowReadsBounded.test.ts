import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { watchSponsorBalances } from '../../src/sending/sponsorBalances.ts'
import { createHarness, fillRows, type Harness, resultOf } from '../../src/testing/harness.ts'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { deploymentOn } from '../support/twoInstances.ts'

/**
 * The default sponsor's LATCHKEY_SPONSOR_BALANCE_LOW goes to the top-level organizations. The
 * crossing's transaction (SERIALIZABLE on PostgreSQL) used to read every webhook endpoint of every
 * organization and then each distinct organization, to keep the top-level ones: it grew with every
 * end user (the root of a sub-organization, one per sign-up) who ever made an endpoint, at the
 * moment the operator needs the alert. It reads the same few rows however many there are.
 */

const CHAIN = 'eip155:31337'
const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})
let cluster: PostgresCluster | undefined
afterAll(async () => {
  await cluster?.dispose()
}, 60_000)

interface Reads {
  /** Calls of get, findBy, all, pageBy, count in the crossing's transactions. */
  calls: number
  /** Rows those calls returned. */
  rows: number
  endpointRows: number
}

async function crossing(endUsers: number, database: 'memory' | 'postgres') {
  const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
    const { id } = JSON.parse(String(init?.body)) as { id: number }
    return new Response(JSON.stringify({ jsonrpc: '2.0', id, result: `0x${(10n ** 15n).toString(16)}` }))
  }) as typeof globalThis.fetch
  const options = {
    fetch,
    rpc: { [CHAIN]: 'http://node.test' },
    sending: { worker: false },
    sponsorship: { delegates: { [CHAIN]: '0x00000000000000000000000000000000000000d1' } },
  }
  let h: Harness
  if (database === 'postgres') {
    cluster ??= await startPostgres()
    h = await deploymentOn(cluster, `sponsor_low_${endUsers}`, options as never).open()
  } else h = await createHarness(options)
  harnesses.push(h)
  // The app (top-level) listens for its sponsor running low.
  const { endpointId } = resultOf(
    'create_webhook_endpoint',
    await h.submit('create_webhook_endpoint', {
      url: 'https://app.example.com/hook',
      name: 'app',
      subscriptions: [{ eventType: 'LATCHKEY_SPONSOR_BALANCE_LOW' }],
    }),
  )
  // End users, each the root of its own sub-organization with an endpoint of its own (subscribed
  // to the alert too: it is not theirs). Written directly, as create_webhook_endpoint would.
  await fillRows(h, 'organizations', endUsers, (i) => ({
    name: `end user ${i}`,
    parentOrganizationId: h.organizationId,
    rootUserIds: [],
    rootQuorumThreshold: 1,
  }))
  await fillRows(h, 'webhookEndpoints', endUsers, (i) => ({
    organizationId: `filler-organizations-${String(i).padStart(6, '0')}`,
    url: 'https://end-user.example.com/',
    name: 'mine',
    isActive: true,
    subscriptions: [{ eventType: 'LATCHKEY_SPONSOR_BALANCE_LOW', isActive: true }],
    sequence: 0,
    consecutiveFailures: 0,
  }))
  const store = h.service.runtime.store
  const reads: Reads = { calls: 0, rows: 0, endpointRows: 0 }
  const transaction = store.transaction.bind(store)
  store.transaction = ((run: (tx: never) => unknown, ...rest: unknown[]) =>
    transaction(
      // biome-ignore lint/suspicious/noExplicitAny: wraps whatever the transaction is
      (tx: any) => {
        const wrapped = Object.create(tx)
        for (const method of ['get', 'findBy', 'all', 'pageBy', 'count'] as const)
          wrapped[method] = async (table: string, ...args: unknown[]) => {
            const result = await tx[method](table, ...args)
            const rows = Array.isArray(result) ? result.length : result === undefined ? 0 : 1
            reads.calls++
            reads.rows += rows
            if (table === 'webhookEndpoints') reads.endpointRows += rows
            return result
          }
        return run(wrapped as never)
      },
      ...(rest as []),
    )) as typeof store.transaction
  const watch = watchSponsorBalances(h.service.runtime, { lowWei: 10n ** 16n, evmChains: [CHAIN] })
  try {
    await watch.refresh()
  } finally {
    watch.stop()
    store.transaction = transaction
  }
  // The alert reached the app's endpoint, and only it.
  const events = (await h.service.store.all('webhookEvents')).filter(
    (event) => event.eventType === 'LATCHKEY_SPONSOR_BALANCE_LOW',
  )
  expect(events.map((event) => [event.organizationId, event.endpointIds])).toEqual([
    [h.organizationId, [endpointId]],
  ])
  return reads
}

describe('the default sponsor’s low-balance alert', () => {
  it('reads the same rows with 2,000 end users’ endpoints as with none, and reaches the top-level endpoint', async () => {
    const none = await crossing(0, 'memory')
    const many = await crossing(2000, 'memory')
    expect(many).toEqual(none)
    expect(many.endpointRows).toBeLessThanOrEqual(10)
    expect(many.calls).toBeLessThan(20)
  }, 120_000)

  it('the same on PostgreSQL (5,000 end users)', async () => {
    const none = await crossing(0, 'postgres')
    const many = await crossing(5000, 'postgres')
    expect(many).toEqual(none)
    expect(many.endpointRows).toBeLessThanOrEqual(10)
  }, 300_000)
})
