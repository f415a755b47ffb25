import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { openPostgres } from '../kernel/store/durableStores.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import type { Store } from '../kernel/store/Store.ts'
import { createMetrics } from '../observability/metrics.ts'
import { createHarness, ETHEREUM_ACCOUNT, type Harness, resultOf, testKey } from '../testing/harness.ts'
import { unsignedTransfer } from '../testing/unsignedTransfer.ts'

/** PostgreSQL's batching counters (reads ahead and inserts), which that backend always has. */
function pgCounts(store: { batching(): ReturnType<Store['batching']> }) {
  const { lookups, inserts } = store.batching()
  if (!lookups || !inserts) throw new Error('no statement batching: not PostgreSQL')
  return { lookups, inserts }
}

/**
 * On PostgreSQL every statement is a round trip: a signing reads its credential, user,
 * organization, policies and signer in one statement and inserts its activity and the record of
 * its decision in one more (a snapshot run, `Store.transaction`), and a new wallet adds its rows
 * to that insert. The counts come from PostgreSQL's own statement log (`log_statement = 'all'`),
 * on a warm connection. The snapshot run's answers (replays, fallbacks to a transaction, policies)
 * are checked on PostgreSQL and on SQLite, which runs them in transactions as before.
 */
let cluster: PostgresCluster | undefined
/** PostgreSQL's log lines while a request is counted. */
let log: string[] | undefined
let database = 0
afterAll(async () => {
  await cluster?.dispose()
})

const backends: [string, () => Promise<Store>][] = [
  ['in-memory SQLite', () => openMemoryStore()],
  [
    'PostgreSQL',
    async () => {
      const name = `statements_${++database}`
      cluster!.psql(`create database ${name}`)
      return openPostgres(cluster!.url.replace(/\/[^/]*$/, `/${name}`), { max: 2 })
    },
  ],
]

const settle = () => new Promise((resolve) => setTimeout(resolve, 300))

/** Every advisory lock the log shows taken was given back (a lock group's unlock is sent last). */
const unlocked = (statements: string[]) => {
  const count = (pattern: RegExp) =>
    statements.reduce((sum, statement) => sum + (statement.match(pattern)?.length ?? 0), 0)
  const locks = count(/pg_advisory_lock\(/g)
  return locks > 0 && count(/pg_advisory_unlock\(/g) === locks
}

/** The statements PostgreSQL logged while `send` ran (nothing else uses the cluster meanwhile). */
/**
 * Statements the service's own timers send whenever they fire, whatever the request: the keyring's
 * poll (`followKeyring`, every few seconds on PostgreSQL). The log is the database's, all
 * connections together, so one can land between a request's lock and its unlock.
 */
const TIMERS = [/^select "data" from "keyring" where "id" = \$1$/]

async function statementsOf<R>(
  send: () => Promise<R>,
  /**
   * What the log must show before it is read (polled up to 10 s): PostgreSQL writes its log a
   * little after it answers, and a group's unlock is sent after its transactions are answered.
   */
  until: (statements: string[]) => boolean = () => true,
): Promise<{ reply: R; statements: string[] }> {
  cluster!.psql("alter system set log_statement = 'all'")
  cluster!.psql('select pg_reload_conf()')
  await settle()
  log = []
  try {
    const reply = await send()
    const logged = () =>
      log!
        .map((line) => /LOG: +(?:statement|execute [^:]*): +(.*)$/.exec(line)?.[1])
        .filter(
          (statement): statement is string =>
            statement !== undefined && !TIMERS.some((timer) => timer.test(statement)),
        )
    await settle()
    for (let waited = 0; !until(logged()) && waited < 10_000; waited += 100)
      await new Promise((resolve) => setTimeout(resolve, 100))
    return { reply, statements: logged() }
  } finally {
    log = undefined
    cluster!.psql('alter system reset log_statement')
    cluster!.psql('select pg_reload_conf()')
  }
}

const signParams = (signWith: string, payload = 'ab'.repeat(32)) => ({
  signWith,
  payloads: [payload],
  encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
  hashFunction: 'HASH_FUNCTION_NO_OP',
})

const ALLOW_SIGN = {
  policyName: 'Back end may sign',
  effect: 'EFFECT_ALLOW',
  condition: "activity.resource == 'WALLET' && activity.action == 'SIGN'",
  notes: 'statements test',
}

describe.each(backends)('activities that only add rows: %s', (name, open) => {
  const postgres = name === 'PostgreSQL'
  let h: Harness
  let signer: string
  beforeAll(async () => {
    if (postgres && !cluster) cluster = await startPostgres({ log: (line: string) => log?.push(line) })
    // No job worker polls the database while statements are counted.
    h = await createHarness({ store: await open(), jobs: { pollMs: 3_600_000 } })
    const made = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'signer', accounts: [ETHEREUM_ACCOUNT] }),
    )
    signer = made.addresses[0]
  }, 300_000)
  afterAll(async () => {
    await h?.service.close()
  })

  it.runIf(postgres)('a signing runs at most 3 statements and a new wallet at most 4', async () => {
    // Warm the connections (prepared statements) with the same shapes first.
    for (let i = 0; i < 3; i++) {
      h.clock.advance(1)
      resultOf('sign_raw_payloads', await h.submit('sign_raw_payloads', signParams(signer)))
      resultOf(
        'create_wallet',
        await h.submit('create_wallet', { walletName: `warm ${i}`, accounts: [ETHEREUM_ACCOUNT] }),
      )
    }
    h.clock.advance(1)
    const signing = await statementsOf(() => h.submit('sign_raw_payloads', signParams(signer)))
    expect(resultOf('sign_raw_payloads', signing.reply).signatures).toHaveLength(1)
    expect(signing.statements.length, signing.statements.join('\n')).toBeGreaterThan(0)
    expect(signing.statements.length, signing.statements.join('\n')).toBeLessThanOrEqual(3)

    const wallet = await statementsOf(() =>
      h.submit('create_wallet', { walletName: 'counted', accounts: [ETHEREUM_ACCOUNT] }),
    )
    expect(resultOf('create_wallet', wallet.reply).addresses).toHaveLength(1)
    expect(wallet.statements.length, wallet.statements.join('\n')).toBeLessThanOrEqual(4)
  })

  /** A sub-organization's new account under a daily limit of 1,000 wei, and how to act as its key. */
  async function limitedAccount(walletName: string) {
    const key = testKey()
    const sub = await h.createSubOrganization({
      keys: [key],
      wallet: { walletName, accounts: [ETHEREUM_ACCOUNT] },
    })
    const as = { organizationId: sub.organizationId, as: key }
    const address = sub.addresses![0]!
    h.clock.advance(1)
    resultOf(
      'latchkey_create_spending_limit',
      await h.submit(
        'latchkey_create_spending_limit',
        {
          spendingLimitName: 'daily',
          scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address },
          window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
          asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
          amount: '1000',
        },
        as,
      ),
    )
    return { as, address }
  }

  it.runIf(postgres)(
    'a signing under a spending limit: one read and one write inside its locked transaction, 6 statements from its lock to its release',
    async () => {
      const { as, address } = await limitedAccount('limited')
      let nonce = 0
      const sign = () => {
        h.clock.advance(1)
        return h.submit(
          'sign_transaction',
          {
            signWith: address,
            type: 'TRANSACTION_TYPE_ETHEREUM',
            unsignedTransaction: unsignedTransfer({ value: 1n, nonce: nonce++, maxFeePerGas: 0n }),
          },
          as,
        )
      }
      for (let i = 0; i < 3; i++) resultOf('sign_transaction', await sign())
      const signing = await statementsOf(sign, unlocked)
      expect(resultOf('sign_transaction', signing.reply).signedTransaction).toMatch(/^(0x)?02/)
      const shown = signing.statements.join('\n')
      // From the spend lock to its release: lock, begin, the transaction's one read (the
      // organization's limits and usage rows, and what its decision and run rest on: the
      // caller's key and user, the organization, the policies, the signer, all as of its
      // snapshot; nothing from the reads made before the lock), its one write (activity,
      // decision record and usage row), commit, unlock. Before: 15, each read and write a round
      // trip of its own.
      const lock = signing.statements.findIndex((statement) => /pg_advisory_lock\(/.test(statement))
      const unlock = signing.statements.findIndex((statement) => /pg_advisory_unlock\(/.test(statement))
      expect(lock, shown).toBeGreaterThan(0)
      const locked = signing.statements.slice(lock, unlock + 1)
      expect(locked.length, shown).toBe(6)
      expect(locked[1], shown).toMatch(/^begin\b/i)
      expect(locked[2], shown).toMatch(/^select\b/i)
      expect(locked[2], shown).toMatch(/"spendingLimitUsage"/)
      expect(locked[2], shown).toMatch(/"policies"/)
      expect(locked[2], shown).toMatch(/"apiKeys"/)
      expect(locked[2], shown).toMatch(/"organizations"/)
      expect(locked[2], shown).toMatch(/"walletAccounts"/)
      expect(locked[3], shown).toMatch(/^with\b.*insert into "spendingLimitUsage"/i)
      expect(locked[4], shown).toMatch(/^commit\b/i)
      // Every spend is counted, the last one too.
      const limits = await h.query('latchkey_list_spending_limits', {}, as)
      expect(limits.body.spendingLimits).toEqual([expect.objectContaining({ used: '4', remaining: '996' })])
    },
  )

  it.runIf(postgres)(
    'concurrent signings under one spending limit share their transactions: fewer commits than signings, every spend counted once',
    async () => {
      const { as, address } = await limitedAccount('grouped')
      const count = 24
      h.clock.advance(1)
      const signings = await statementsOf(
        () =>
          Promise.all(
            Array.from({ length: count }, (_, nonce) =>
              h.submit(
                'sign_transaction',
                {
                  signWith: address,
                  type: 'TRANSACTION_TYPE_ETHEREUM',
                  unsignedTransaction: unsignedTransfer({ value: 1n, nonce, maxFeePerGas: 0n }),
                },
                as,
              ),
            ),
          ),
        unlocked,
      )
      for (const reply of signings.reply)
        expect(resultOf('sign_transaction', reply).signedTransaction).toMatch(/^(0x)?02/)
      const shown = signings.statements.join('\n')
      const commits = signings.statements.filter((statement) => /^commit\b/i.test(statement)).length
      const locks = signings.statements.filter((statement) => /pg_advisory_lock\(/.test(statement)).length
      // Alone, each signing is a transaction of its own: 24 locks, 24 commits. Queued behind one
      // another for the organization's spend lock, those that queued meanwhile go as one, and a
      // group that finds more queued when it commits keeps its lock for them (a chain): they
      // follow it on its connection, with no lock of their own.
      expect(commits, shown).toBeGreaterThan(0)
      expect(commits, shown).toBeLessThan(count)
      expect(locks, shown).toBeGreaterThan(0)
      expect(locks, shown).toBeLessThanOrEqual(commits)
      // A group reads its signings' lookups in one statement and sends their writes (activities,
      // decision records, the usage row) in one: 6 statements from its lock to its release, not
      // 4 + 2 a signing. A follower reads its own, behind the commit before it (begin, read,
      // write, commit): the policies and credential it decides on may have changed meanwhile.
      const writes = signings.statements.filter((statement) =>
        /^with\b.*insert into "spendingLimitUsage"/i.test(statement),
      ).length
      expect(writes, shown).toBe(commits)
      const reads = signings.statements.filter((statement) =>
        /^select\b.*from "spendingLimitUsage"/i.test(statement),
      ).length
      expect(reads, shown).toBe(commits)
      const limits = await h.query('latchkey_list_spending_limits', {}, as)
      expect(limits.body.spendingLimits).toEqual([
        expect.objectContaining({ used: String(count), remaining: String(1000 - count) }),
      ])
      expect(
        (await h.service.store.findBy('activities', 'organizationId', as.organizationId)).filter(
          (row) => row.path === 'sign_transaction' && row.status === 'ACTIVITY_STATUS_COMPLETED',
        ),
      ).toHaveLength(count)
    },
  )

  it('counts where a signing spent its time, stage by stage (GET /dev/timings)', async () => {
    expect((await h.service.app.request('/dev/timings', { method: 'DELETE' })).status).toBe(204)
    h.clock.advance(1)
    resultOf('sign_raw_payloads', await h.submit('sign_raw_payloads', signParams(signer, 'ab'.repeat(32))))
    const stages = (await (await h.service.app.request('/dev/timings')).json()) as Record<
      string,
      { count: number; p50: number; p99: number; max: number }
    >
    for (const stage of ['read', 'authenticate', 'admit', 'precompute', 'transaction', 'render', 'submit'])
      expect(stages[stage]?.count, stage).toBe(1)
    // The store's waits: PostgreSQL's shared statements (reads ahead, inserts), SQLite's commit group.
    const store = postgres ? ['statement wait', 'statement'] : ['commit wait', 'commit group']
    for (const stage of [...store, 'crypto queue', 'crypto'])
      expect(stages[stage]?.count, stage).toBeGreaterThanOrEqual(1)
    expect(stages[postgres ? 'commit wait' : 'statement wait']).toBeUndefined()
    // Each stage lies within the whole request.
    for (const [stage, figures] of Object.entries(stages))
      expect(figures.p50, stage).toBeLessThanOrEqual(stages.submit!.max * 1.05)
  })

  it.runIf(postgres)(
    'a sub-organization’s signing and new wallet stay snapshot runs whatever endpoints its parent has (no rerun as a transaction)',
    async () => {
      const key = testKey()
      const sub = await h.createSubOrganization({
        keys: [key],
        wallet: { walletName: 'sub', accounts: [ETHEREUM_ACCOUNT] },
      })
      const as = { organizationId: sub.organizationId, as: key }
      const figures: Record<string, { statements: number; reruns: number }> = {}
      /** A sub-organization's signing and new wallet, counted: a `begin` is a rerun as a transaction. */
      const count = async (label: string) => {
        for (let i = 0; i < 2; i++) {
          h.clock.advance(1)
          resultOf(
            'sign_raw_payloads',
            await h.submit('sign_raw_payloads', signParams(sub.addresses![0]!), as),
          )
        }
        h.clock.advance(1)
        const signing = await statementsOf(() =>
          h.submit('sign_raw_payloads', signParams(sub.addresses![0]!), as),
        )
        expect(resultOf('sign_raw_payloads', signing.reply).signatures).toHaveLength(1)
        const wallet = await statementsOf(() =>
          h.submit('create_wallet', { walletName: label, accounts: [ETHEREUM_ACCOUNT] }, as),
        )
        expect(resultOf('create_wallet', wallet.reply).addresses).toHaveLength(1)
        for (const [name, counted] of [
          ['sign_raw_payloads', signing.statements],
          ['create_wallet', wallet.statements],
        ] as const)
          figures[`${name}, ${label}`] = {
            statements: counted.length,
            reruns: counted.filter((statement) => /^begin\b/i.test(statement)).length,
          }
      }
      await count('no parent endpoint')
      const endpoint = async (eventType: string) => {
        h.clock.advance(1)
        return resultOf(
          'create_webhook_endpoint',
          await h.submit('create_webhook_endpoint', {
            url: 'https://hooks.example.com/',
            name: eventType,
            subscriptions: [{ eventType }],
          }),
        ).endpointId
      }
      const quiet = await endpoint('LATCHKEY_LOGIN')
      await count('a parent endpoint that wants none of it')
      const loud = await endpoint('ACTIVITY_UPDATES')
      await count('a parent endpoint on ACTIVITY_UPDATES')
      // ... and it got every one of them: three signings and a wallet, each one event row naming
      // it (fanned out to delivery rows by the job worker's ticks: either, whenever a tick ran).
      const events = (await h.service.store.all('webhookEvents'))
        .filter((row) => row.endpointIds.includes(loud))
        .map((row) => ({ ...row, data: row.data as { activityType: string } }))
      const fannedOut = (await h.service.store.findBy('webhookDeliveries', 'endpointId', loud)).map(
        (row) => ({
          ...row,
          data: JSON.parse(row.body).data as { activityType: string },
        }),
      )
      expect(
        [...events, ...fannedOut]
          .filter((row) => row.organizationId === sub.organizationId)
          .sort((a, b) => a.createdAt - b.createdAt)
          .map((row) => [row.eventType, row.data.activityType]),
      ).toEqual([
        ...Array(3).fill(['ACTIVITY_UPDATES', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS']),
        ['ACTIVITY_UPDATES', 'ACTIVITY_TYPE_CREATE_WALLET'],
      ])
      for (const endpointId of [quiet, loud]) {
        h.clock.advance(1)
        resultOf('delete_webhook_endpoint', await h.submit('delete_webhook_endpoint', { endpointId }))
      }
      // Reading the parent's endpoints is part of the one read ahead: no rerun, whoever the parent
      // has. An endpoint that wants the event adds one event row to the insert and updates
      // nothing (its sequence number is given at the fan-out): still no rerun (before: 16 and 17
      // statements, a rerun each, and the activities ordered one at a time in the process).
      for (const label of [
        'no parent endpoint',
        'a parent endpoint that wants none of it',
        'a parent endpoint on ACTIVITY_UPDATES',
      ])
        for (const name of ['sign_raw_payloads', 'create_wallet']) {
          expect(figures[`${name}, ${label}`], `${name}, ${label}`).toMatchObject({ reruns: 0 })
          expect(figures[`${name}, ${label}`]!.statements).toBeLessThanOrEqual(
            name === 'create_wallet' ? 4 : 3,
          )
        }
    },
  )

  it('the same signed bytes again, or twice at once, answer with one activity', async () => {
    h.clock.advance(1)
    const first = await h.submit('sign_raw_payloads', signParams(signer, 'cd'.repeat(32)))
    const again = await h.submit('sign_raw_payloads', signParams(signer, 'cd'.repeat(32)))
    expect(again.body.activity.id).toBe(first.body.activity.id)
    expect(again.body.activity.result).toEqual(first.body.activity.result)
    h.clock.advance(1)
    const twice = await Promise.all([
      h.submit('sign_raw_payloads', signParams(signer, 'ef'.repeat(32))),
      h.submit('sign_raw_payloads', signParams(signer, 'ef'.repeat(32))),
    ])
    expect(twice.map((reply) => reply.status)).toEqual([200, 200])
    expect(twice[1].body.activity.id).toBe(twice[0].body.activity.id)
    const rows = await h.service.store.findBy('activities', 'fingerprint', twice[0].body.activity.fingerprint)
    expect(rows.map((row) => row.id)).toEqual([twice[0].body.activity.id])
  })

  it('a signer the request’s reads did not find ahead (another case of its address) still signs', async () => {
    h.clock.advance(1)
    const upper = `0x${signer.slice(2).toUpperCase()}`
    const reply = await h.submit('sign_raw_payloads', signParams(upper))
    expect(resultOf('sign_raw_payloads', reply).signatures).toHaveLength(1)
    const missing = await h.submit('sign_raw_payloads', signParams(`0x${'12'.repeat(20)}`))
    expect(missing.body.details).toMatchObject({
      errorCode: 'WALLET_ACCOUNT_NOT_FOUND',
      field: 'parameters.signWith',
    })
    // Its failure is recorded once, with the record of the decision.
    const failed = (await h.service.store.findBy('activities', 'organizationId', h.organizationId)).filter(
      (row) => row.status === 'ACTIVITY_STATUS_FAILED',
    )
    expect(failed).toHaveLength(1)
    expect(await h.service.store.findBy('policyEvaluations', 'activityId', failed[0]!.id)).toHaveLength(1)
  })

  it('a user who is not root signs only once a policy allows it, as of the request', async () => {
    const key = testKey()
    resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'back end',
            apiKeys: [key.apiKey('k')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    h.clock.advance(1)
    const refused = await h.submit('sign_raw_payloads', signParams(signer), { as: key })
    expect(refused.status).toBe(403)
    expect(refused.body.details).toMatchObject({
      errorCode: 'PERMISSION_DENIED',
      outcome: 'OUTCOME_DENY_IMPLICIT',
    })
    const { policyId } = resultOf('create_policy', await h.submit('create_policy', ALLOW_SIGN))
    h.clock.advance(1)
    const allowed = await h.submit('sign_raw_payloads', signParams(signer), { as: key })
    expect(resultOf('sign_raw_payloads', allowed).signatures).toHaveLength(1)
    const evaluations = await h.service.store.findBy(
      'policyEvaluations',
      'activityId',
      allowed.body.activity.id,
    )
    expect(evaluations.map((row) => row.outcomes)).toEqual([
      [{ outcome: 'OUTCOME_ALLOW' }, { policyId, outcome: 'OUTCOME_ALLOW' }],
    ])
    resultOf('delete_policy', await h.submit('delete_policy', { policyId }))
    h.clock.advance(1)
    expect((await h.submit('sign_raw_payloads', signParams(signer), { as: key })).status).toBe(403)
  })

  it('a new wallet’s rows are all written, with its activity', async () => {
    const reply = await h.submit('create_wallet', {
      walletName: 'two accounts',
      accounts: [ETHEREUM_ACCOUNT, { ...ETHEREUM_ACCOUNT, path: "m/44'/60'/0'/0/1" }],
    })
    const { walletId, addresses } = resultOf('create_wallet', reply)
    expect(addresses).toHaveLength(2)
    expect((await h.service.store.get('wallets', walletId))?.name).toBe('two accounts')
    expect(
      (await h.service.store.findBy('walletAccounts', 'walletId', walletId)).map((a) => a.address),
    ).toEqual(addresses)
    expect((await h.service.store.get('activities', reply.body.activity.id))?.status).toBe(
      'ACTIVITY_STATUS_COMPLETED',
    )
  })
})

/**
 * On PostgreSQL the reads ahead and the inserts of concurrent requests go together, one statement
 * a batch (`Coalescer`): fewer statements than requests, each request still answered as if alone,
 * and no request able to fail the others' statement.
 */
describe('requests at once on PostgreSQL share statements', () => {
  let h: Harness
  let signer: string
  beforeAll(async () => {
    if (!cluster) cluster = await startPostgres({ log: (line: string) => log?.push(line) })
    h = await createHarness({ store: await backends[1]![1](), jobs: { pollMs: 3_600_000 } })
    signer = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'signer', accounts: [ETHEREUM_ACCOUNT] }),
    ).addresses[0]
  }, 300_000)
  afterAll(async () => {
    await h?.service.close()
  })

  const activitiesWith = (fingerprint: string) =>
    h.service.store.findBy('activities', 'fingerprint', fingerprint)

  it('forty signings at once: each signed and recorded once, in far fewer statements than alone', async () => {
    h.clock.advance(1)
    const payloads = Array.from({ length: 40 }, (_, i) => i.toString(16).padStart(2, '0').repeat(32))
    const before = pgCounts(h.service.store)
    const { reply: replies, statements } = await statementsOf(() =>
      Promise.all(payloads.map((payload) => h.submit('sign_raw_payloads', signParams(signer, payload)))),
    )
    const after = pgCounts(h.service.store)
    for (const reply of replies) expect(resultOf('sign_raw_payloads', reply).signatures).toHaveLength(1)
    // Each signature is the one for its own payload (a batch never mixes up answers).
    replies.forEach((reply, i) => {
      expect(reply.body.activity.intent.signRawPayloadsIntent.payloads).toEqual([payloads[i]])
    })
    expect(new Set(replies.map((reply) => reply.body.activity.id)).size).toBe(40)
    for (const reply of replies) {
      expect(await activitiesWith(reply.body.activity.fingerprint)).toHaveLength(1)
      expect(
        await h.service.store.findBy('policyEvaluations', 'activityId', reply.body.activity.id),
      ).toHaveLength(1)
    }
    // Alone, 40 signings are 80 statements.
    expect(statements.length, statements.join('\n')).toBeLessThan(60)
    expect(after.lookups.items - before.lookups.items).toBe(40)
    expect(after.lookups.batches - before.lookups.batches).toBeLessThan(40)
    expect(after.inserts.batches - before.inserts.batches).toBeLessThan(40)
    // What an operator reads: requests per statement, from the counters on /metrics.
    const metrics = createMetrics({ process: false })
    metrics.watch({ batching: () => h.service.store.batching() })
    const exposition = await metrics.render()
    const sample = (name: string, kind: string) =>
      Number(new RegExp(`^${name}\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(exposition)?.[1])
    const now = pgCounts(h.service.store)
    expect(sample('latchkey_store_batches_total', 'lookups')).toBe(now.lookups.batches)
    expect(sample('latchkey_store_batched_requests_total', 'lookups')).toBe(now.lookups.items)
    expect(sample('latchkey_store_batched_requests_total', 'inserts')).toBe(now.inserts.items)
    expect(now.lookups.items / now.lookups.batches).toBeGreaterThan(1)
  })

  it('replays inside a batch answer with the first activity; twins in one batch make one', async () => {
    h.clock.advance(1)
    const first = await h.submit('sign_raw_payloads', signParams(signer, 'aa'.repeat(32)))
    const others = Array.from({ length: 20 }, (_, i) => (100 + i).toString(16).repeat(32))
    const replies = await Promise.all([
      ...others.map((payload) => h.submit('sign_raw_payloads', signParams(signer, payload))),
      h.submit('sign_raw_payloads', signParams(signer, 'aa'.repeat(32))),
      h.submit('sign_raw_payloads', signParams(signer, 'bb'.repeat(32))),
      h.submit('sign_raw_payloads', signParams(signer, 'bb'.repeat(32))),
    ])
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 200))
    const [replay, twin1, twin2] = replies.slice(-3)
    expect(replay!.body.activity.id).toBe(first.body.activity.id)
    expect(twin2!.body.activity.id).toBe(twin1!.body.activity.id)
    expect(await activitiesWith(first.body.activity.fingerprint)).toHaveLength(1)
    expect(await activitiesWith(twin1!.body.activity.fingerprint)).toHaveLength(1)
    for (const reply of replies.slice(0, 20))
      expect(await activitiesWith(reply.body.activity.fingerprint)).toHaveLength(1)
  })

  it('a request whose values PostgreSQL refuses fails alone, with a 4xx; the batch it was in is answered', async () => {
    h.clock.advance(1)
    const good = Array.from({ length: 20 }, (_, i) => (150 + i).toString(16).repeat(32))
    const replies = await Promise.all([
      ...good.map((payload) => h.submit('sign_raw_payloads', signParams(signer, payload))),
      // A NUL byte cannot be in a PostgreSQL text value: read in the batch, it fails the statement.
      h.submit('sign_raw_payloads', signParams(signer), { organizationId: `${h.organizationId}\u0000` }),
      h.submit('sign_raw_payloads', signParams(`${signer}\u0000`, 'ee'.repeat(32))),
    ])
    for (const reply of replies.slice(0, 20))
      expect(resultOf('sign_raw_payloads', reply).signatures).toHaveLength(1)
    const [badOrganization, badSigner] = replies.slice(-2)
    expect(badOrganization!.status, JSON.stringify(badOrganization!.body)).toBeGreaterThanOrEqual(400)
    expect(badOrganization!.status).toBeLessThan(500)
    expect(badSigner!.status, JSON.stringify(badSigner!.body)).toBeGreaterThanOrEqual(400)
    expect(badSigner!.status).toBeLessThan(500)
  })

  it('inserts at once: a row that meets an existing one fails only its own insert, then reruns alone', async () => {
    const store = h.service.store
    const snapshot = await store.prefetch([{ table: 'userTags', field: 'organizationId', value: 'none' }])
    const tag = (id: string, name = id) =>
      ({ id, organizationId: 'batch-test', name, createdAt: '0' }) as never
    await store.transaction((tx) => tx.put('userTags', tag('tag-taken', 'before')))
    const attempts: number[] = []
    const runs = Array.from({ length: 12 }, (_, i) => `tag-${i}`).map((id) =>
      store.transaction((tx) => tx.put('userTags', tag(id)), { snapshot }),
    )
    // Its insert fails the batch's statement (the id exists); the others are sent again, each on
    // its own, and it reruns in a transaction, where a put replaces the row.
    runs.push(
      store.transaction(
        (tx) => {
          attempts.push(tx.attempt)
          return tx.put('userTags', tag('tag-taken', 'after'))
        },
        { snapshot },
      ),
    )
    const before = pgCounts(store).inserts
    const outcomes = await Promise.allSettled(runs)
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(13).fill('fulfilled'))
    expect(pgCounts(store).inserts.batches - before.batches).toBeLessThan(13)
    expect(attempts).toEqual([1, 2])
    expect(
      (await store.findBy('userTags', 'organizationId', 'batch-test')).map((row) => [row.id, row.name]),
    ).toEqual(
      [...Array.from({ length: 12 }, (_, i) => [`tag-${i}`, `tag-${i}`]), ['tag-taken', 'after']].sort(),
    )
  })

  it('a value no row can hold finds nothing and is never written', async () => {
    const store = h.service.store
    expect(await store.get('organizations', `${h.organizationId}\u0000`)).toBeUndefined()
    expect(await store.findBy('apiKeys', 'publicKey', 'ab\u0000')).toEqual([])
    const found = await store.prefetch([
      { table: 'organizations', id: `${h.organizationId}\u0000` },
      { table: 'organizations', id: h.organizationId },
    ])
    expect(await found.get('organizations', `${h.organizationId}\u0000`)).toBeUndefined()
    expect((await found.get('organizations', h.organizationId))?.id).toBe(h.organizationId)
    const tag = { id: 'tag\u0000', organizationId: 'batch-test', name: 'nul', createdAt: '0' } as never
    await expect(store.transaction((tx) => tx.put('userTags', tag))).rejects.toMatchObject({
      errorCode: 'FIELD_INVALID',
    })
  })
})
