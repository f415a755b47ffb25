import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { openPostgres } from '../store/durableStores.ts'
import { openMemoryStore } from '../store/memory.ts'
import type { Store } from '../store/Store.ts'
import { createHarness, ETHEREUM_ACCOUNT, type Harness, resultOf, testKey } from '../testing/harness.ts'

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

/** The statements PostgreSQL logged while `send` ran (nothing else uses the cluster meanwhile). */
async function statementsOf<R>(send: () => Promise<R>): Promise<{ reply: R; statements: string[] }> {
  cluster!.psql("alter system set log_statement = 'all'")
  cluster!.psql('select pg_reload_conf()')
  await settle()
  log = []
  try {
    const reply = await send()
    await settle()
    const statements = log
      .map((line) => /LOG: +(?:statement|execute [^:]*): +(.*)$/.exec(line)?.[1])
      .filter((statement): statement is string => statement !== undefined)
    return { reply, statements }
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
