// Sends through two service instances on one PostgreSQL database and one anvil: the outer nonce is
// taken under the database's serialisation, so concurrent sends from one account on both
// instances use contiguous nonces and each is included once; gas caps hold across both; a refused
// send leaves no hole in the sponsor's or a user's nonces, filled once whichever instance sees it.
import { addr, Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { createMetrics } from '../../src/observability/metrics.ts'
import { MAX_OPEN_SENDS } from '../../src/sending/ethSend.ts'
import { fillIdOf } from '../../src/sending/evmSender.ts'
import { STALLED_SECONDS, watchSendBacklog } from '../../src/sending/sendBacklog.ts'
import { nonceIdOf } from '../../src/sending/sendingState.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { ETHEREUM_ACCOUNT, limitedSubOrganization, resultOf } from '../../src/testing/harness.ts'
import { deploymentOn, twoInstances as twoOnPostgres } from '../support/twoInstances.ts'
import { type Chain, endUser, erc20Call, refusingNode, startChain, waitForSend } from './sendSupport.ts'

const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'

let chain: Chain
let cluster: PostgresCluster

beforeAll(async () => {
  ;[chain, cluster] = await Promise.all([startChain(), startPostgres()])
}, 600_000)

afterAll(async () => {
  await chain?.node.close()
  await cluster?.dispose()
}, 60_000)

/** Two instances sending through the chain's node. */
const twoInstances = (database: string, options: Partial<CreateServiceOptions> = {}) =>
  twoOnPostgres(cluster, database, {
    rpc: { [CAIP2]: chain.url },
    sending: { pollIntervalMs: 20 },
    ...options,
  })

const receiptNonce = async (hash: string) =>
  Number(BigInt(((await chain.rpc('eth_getTransactionByHash', [hash])) as { nonce: string }).nonce))

describe('sends across two instances on PostgreSQL', { timeout: 120_000 }, () => {
  it('20 concurrent sends from one account split across both: 20 included, contiguous nonces, none replaced', async () => {
    const [a, b] = await twoInstances('twenty_sends')
    const instances = [a!, b!]
    const { addresses } = resultOf(
      'create_wallet',
      await a!.submit('create_wallet', { walletName: 'shared', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0] as string
    await chain.fund(from, 10n ** 19n)
    const first = Number(BigInt((await chain.rpc('eth_getTransactionCount', [from, 'pending'])) as string))
    a!.clock.set(Date.now())
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        instances[i % 2]!.submit('eth_send_transaction', {
          from,
          caip2: CAIP2,
          calls: [{ to: DEAD, value: String(i + 1) }],
        }),
      ),
    )
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200))
    const ids = replies.map(
      (reply) => resultOf('eth_send_transaction', reply).sendTransactionStatusId as string,
    )
    const statuses = await Promise.all(
      ids.map((id, i) => waitForSend(instances[(i + 1) % 2]!, id, { timeoutMs: 60_000 })),
    )
    expect(statuses.map((status) => status.txStatus)).toEqual(Array(20).fill('INCLUDED'))
    const nonces = await Promise.all(statuses.map((status) => receiptNonce(status.eth.txHash)))
    expect([...nonces].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => first + i))
    expect(Number(BigInt((await chain.rpc('eth_getTransactionCount', [from, 'latest'])) as string))).toBe(
      first + 20,
    )
    const rows = await a!.service.store.all('sendTransactions')
    expect(rows).toHaveLength(20)
    expect(rows.filter((row) => row.replacements > 0 || (row.priorHashes ?? []).length > 0)).toEqual([])
    for (const h of instances) await h.service.close()
  })

  it("an account's counter with two holes, 6 concurrent sends split across both: each hole taken once, then the counter, contiguous nonces, all included", async () => {
    const [a, b] = await twoInstances('nonce_holes')
    const instances = [a!, b!]
    const { addresses } = resultOf(
      'create_wallet',
      await a!.submit('create_wallet', { walletName: 'holes', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0] as string
    await chain.fund(from, 10n ** 19n)
    const first = Number(BigInt((await chain.rpc('eth_getTransactionCount', [from, 'pending'])) as string))
    // What two refused sponsored sends' authorizations leave (the worker records them): the
    // counter two past the node, both nonces unused.
    await a!.service.store.transaction((tx) =>
      tx.put('nonces', {
        id: nonceIdOf(CAIP2, from),
        next: String(first + 2),
        holes: [String(first), String(first + 1)],
        createdAt: Date.now(),
        updatedAt: Date.now(),
      }),
    )
    a!.clock.set(Date.now())
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        instances[i % 2]!.submit('eth_send_transaction', {
          from,
          caip2: CAIP2,
          calls: [{ to: DEAD, value: String(i + 1) }],
        }),
      ),
    )
    expect(replies.map((reply) => reply.status)).toEqual(Array(6).fill(200))
    const ids = replies.map(
      (reply) => resultOf('eth_send_transaction', reply).sendTransactionStatusId as string,
    )
    const rows = await Promise.all(
      ids.map(async (id) => (await a!.service.store.get('sendTransactions', id))!),
    )
    expect(rows.map((row) => Number(row.nonce)).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 6 }, (_, i) => first + i),
    )
    const statuses = await Promise.all(
      ids.map((id, i) => waitForSend(instances[(i + 1) % 2]!, id, { timeoutMs: 60_000 })),
    )
    expect(statuses.map((status) => status.txStatus)).toEqual(Array(6).fill('INCLUDED'))
    expect(Number(BigInt((await chain.rpc('eth_getTransactionCount', [from, 'latest'])) as string))).toBe(
      first + 6,
    )
    expect(await a!.service.store.get('nonces', nonceIdOf(CAIP2, from))).toMatchObject({
      next: String(first + 6),
    })
    expect((await a!.service.store.get('nonces', nonceIdOf(CAIP2, from)))!.holes).toBeUndefined()
    for (const h of instances) await h.service.close()
  })

  it('a per-user daily gas cap holds for concurrent sponsored sends over both instances', async () => {
    const batchGas = 80_000 + 30_000 + 70_000 // one call, authorization not yet given
    const [a, b] = await twoInstances('gas_caps', {
      sponsorship: { delegates: { [CAIP2]: chain.delegate }, caps: { perUserPerDay: 3 * batchGas + 50_000 } },
    })
    const instances = [a!, b!]
    await chain.fund(sponsorAddress(a!.service.runtime)!, 10n ** 19n)
    expect(sponsorAddress(b!.service.runtime)).toBe(sponsorAddress(a!.service.runtime))
    const { addresses } = resultOf(
      'create_wallet',
      await a!.submit('create_wallet', { walletName: 'capped', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0] as string
    a!.clock.set(Date.now())
    // Unmined meanwhile: a mined send's caps keep only what it cost.
    await chain.rpc('evm_setAutomine', [false])
    try {
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          instances[i % 2]!.submit('eth_send_transaction', {
            from,
            caip2: CAIP2,
            sponsor: true,
            gasLimit: String(batchGas),
            // Distinct calls: identical bodies would be one activity, replayed.
            calls: [erc20Call('mint', DEAD, BigInt(i + 1))],
          }),
        ),
      )
      expect(replies.filter((reply) => reply.status >= 500)).toEqual([])
      const accepted = replies.filter((reply) => reply.status === 200)
      const refused = replies.filter((reply) => reply.status !== 200)
      expect(accepted).toHaveLength(3)
      for (const reply of refused) expect(reply.body.details.errorCode).toBe('GAS_CAP_EXCEEDED')
      // Gas rows (the same sends' wei are counted in rows of their own).
      const usage = (await a!.service.store.all('gasUsage')).filter((row) => !row.userDay.endsWith('|wei'))
      expect(usage.reduce((sum, row) => sum + Number(row.gas), 0)).toBeLessThanOrEqual(3 * batchGas + 50_000)
      expect(await a!.service.store.all('sendTransactions')).toHaveLength(3)
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await chain.rpc('evm_mine', [])
    }
    for (const h of instances) await h.service.close()
  })

  it('a per-organization monthly wei cap holds for concurrent sponsored sends of two users over both instances', async () => {
    const gasLimit = 200_000n
    const maxFeePerGas = 2_000_000_000n
    // What each counts: its gas limit at the most its replacements may offer (+25%, three times).
    const perSend = gasLimit * 3_906_250_000n
    // Both instances report to one registry, as a dashboard sums them.
    const metrics = createMetrics({ process: false })
    const [a, b] = await twoInstances('wei_caps', {
      events: metrics,
      sponsorship: {
        delegates: { [CAIP2]: chain.delegate },
        caps: { perOrganizationPerMonthWei: String(3n * perSend + perSend / 2n) },
      },
    })
    const instances = [a!, b!]
    await chain.fund(sponsorAddress(a!.service.runtime)!, 10n ** 19n)
    const accounts: string[] = []
    for (const name of ['first', 'second']) {
      const { addresses } = resultOf(
        'create_wallet',
        await a!.submit('create_wallet', { walletName: name, accounts: [ETHEREUM_ACCOUNT] }),
      )
      accounts.push(addresses[0] as string)
    }
    a!.clock.set(Date.now())
    // Unmined meanwhile: a mined send's caps keep only what it cost.
    await chain.rpc('evm_setAutomine', [false])
    try {
      const replies = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          instances[i % 2]!.submit('eth_send_transaction', {
            from: accounts[Math.floor(i / 2) % 2],
            caip2: CAIP2,
            sponsor: true,
            gasLimit: String(gasLimit),
            maxFeePerGas: String(maxFeePerGas),
            maxPriorityFeePerGas: String(10n ** 9n),
            calls: [erc20Call('mint', DEAD, BigInt(i + 1))],
          }),
        ),
      )
      expect(replies.filter((reply) => reply.status >= 500)).toEqual([])
      const refused = replies.filter((reply) => reply.status !== 200)
      expect(replies.filter((reply) => reply.status === 200)).toHaveLength(3)
      for (const reply of refused)
        expect(reply.body.details).toMatchObject({
          errorCode: 'GAS_CAP_EXCEEDED',
          cap: 'per-organization monthly wei',
        })
      const wei = (await a!.service.store.all('gasUsage')).filter((row) =>
        row.organizationMonth.endsWith('|wei'),
      )
      expect(wei.reduce((sum, row) => sum + BigInt(row.gas), 0n)).toBe(3n * perSend)
      expect(await a!.service.store.all('sendTransactions')).toHaveLength(3)
      // Each refusal counted once, though concurrent transactions run again after a conflict.
      expect(await metrics.render()).toContain(
        `latchkey_send_cap_refusals_total{type="eth_send_transaction"} ${refused.length}`,
      )
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await chain.rpc('evm_mine', [])
    }
    for (const h of instances) await h.service.close()
  })

  it("a sponsored send the node refuses, with a later one of another account already signed: one fill over both instances takes the sponsor's nonce, and the later send is included", async () => {
    let attacker = ''
    let release = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    const toOf = (raw: string) => String((Transaction.fromHex(raw).raw as { to?: string }).to).toLowerCase()
    const [a, b] = await twoInstances('nonce_fill', {
      fetch: refusingNode((raw) => toOf(raw) === attacker, { hold }),
      sending: { pollIntervalMs: 20, replaceAfterMs: 300 },
      sponsorship: { delegates: { [CAIP2]: chain.delegate } },
    })
    const sponsor = sponsorAddress(a!.service.runtime)!
    await chain.fund(sponsor, 10n ** 19n)
    const first = BigInt((await chain.rpc('eth_getTransactionCount', [sponsor, 'latest'])) as string)
    const accounts: string[] = []
    for (const name of ['refused', 'later']) {
      const { addresses } = resultOf(
        'create_wallet',
        await a!.submit('create_wallet', { walletName: name, accounts: [ETHEREUM_ACCOUNT] }),
      )
      accounts.push(addresses[0] as string)
    }
    attacker = accounts[0]!.toLowerCase()
    a!.clock.set(Date.now())
    const sent = async (h: typeof a, from: string, amount: bigint) =>
      resultOf(
        'eth_send_transaction',
        await h!.submit('eth_send_transaction', {
          from,
          caip2: CAIP2,
          sponsor: true,
          calls: [erc20Call('mint', DEAD, amount)],
        }),
      ).sendTransactionStatusId as string
    const badId = await sent(a, accounts[0]!, 1n)
    const goodId = await sent(b, accounts[1]!, 2n)
    release()
    expect((await waitForSend(b!, badId, { timeoutMs: 30_000 })).txStatus).toBe('FAILED')
    expect((await waitForSend(a!, goodId, { timeoutMs: 30_000 })).txStatus).toBe('INCLUDED')
    // The fill was mined before the later send; its status follows at the next look.
    expect((await waitForSend(a!, fillIdOf(badId), { timeoutMs: 10_000 })).txStatus).toBe('INCLUDED')
    const rows = await a!.service.store.all('sendTransactions')
    expect(rows.filter((row) => row.fills !== undefined)).toMatchObject([
      { id: fillIdOf(badId), fills: badId, status: 'INCLUDED', nonce: String(first) },
    ])
    expect(rows.find((row) => row.id === goodId)).toMatchObject({ nonce: String(first + 1n) })
    expect(BigInt((await chain.rpc('eth_getTransactionCount', [sponsor, 'latest'])) as string)).toBe(
      first + 2n,
    )
    for (const h of [a, b]) await h!.service.close()
  })

  it("a user's send the node refuses, with the account's next send made on the other instance: one fill over both, its fee counted once under the account's limit, and the next send is included", async () => {
    let release = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    const transferredBy = (raw: string) => (Transaction.fromHex(raw).raw as { value: bigint }).value
    const [a, b] = await twoInstances('account_fill', {
      fetch: refusingNode((raw) => transferredBy(raw) === 7n, {
        hold,
        message: 'insufficient funds for gas * price + value',
      }),
      sending: { pollIntervalMs: 20, replaceAfterMs: 200 },
    })
    const limited = await limitedSubOrganization(a!, { amount: String(10n ** 17n), caip2: CAIP2 })
    await chain.fund(limited.from, 10n ** 18n)
    const price = { gasLimit: '21000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' }
    const send = async (h: typeof a, value: bigint) => {
      h!.clock.set(Date.now())
      return resultOf(
        'eth_send_transaction',
        await h!.submit(
          'eth_send_transaction',
          { from: limited.from, caip2: CAIP2, calls: [{ to: DEAD, value: String(value) }], ...price },
          limited,
        ),
      ).sendTransactionStatusId as string
    }
    // 7 wei through A (refused once released), then 8 wei through B at the next nonce.
    const first = await send(a, 7n)
    const next = await send(b, 8n)
    release()
    const as = { organizationId: limited.organizationId, as: limited, timeoutMs: 30_000 }
    expect((await waitForSend(b!, first, as)).txStatus).toBe('FAILED')
    // Without the fill the next send waits behind the empty nonce for good.
    expect((await waitForSend(a!, next, as)).txStatus).toBe('INCLUDED')
    expect((await waitForSend(b!, fillIdOf(first), as)).txStatus).toBe('INCLUDED')
    const rows = await a!.service.store.all('sendTransactions')
    const failed = rows.find((row) => row.id === first)!
    // One fill, whichever instance's worker saw the refusal, at the refused send's nonce.
    expect(rows.filter((row) => row.fills !== undefined)).toMatchObject([
      { id: fillIdOf(first), fills: first, status: 'INCLUDED', nonce: failed.nonce, sponsored: false },
    ])
    expect(BigInt((await chain.rpc('eth_getTransactionCount', [limited.from, 'latest'])) as string)).toBe(
      BigInt(failed.nonce!) + 2n,
    )
    // The limit, read on either instance: the next send and the fill, what they paid, counted once.
    const paid = (id: string) => {
      const row = rows.find((candidate) => candidate.id === id)!
      return BigInt(row.receipt!.gasUsed) * BigInt(row.receipt!.effectiveGasPrice)
    }
    for (const h of [a, b]) {
      const { spendingLimits } = (await h!.query('latchkey_list_spending_limits', {}, limited)).body
      expect(BigInt(spendingLimits[0].used)).toBe(8n + paid(next) + paid(fillIdOf(first)))
    }
    for (const h of [a, b]) await h!.service.close()
  })

  it('a send made while no instance runs the worker shows on every instance: open, then stalled after two minutes, then broadcast by an instance that runs one', async () => {
    const deployment = deploymentOn(cluster, 'no_worker', {
      rpc: { [CAIP2]: chain.url },
      sending: { pollIntervalMs: 20, worker: false },
    })
    const a = await deployment.open()
    const seen: string[] = []
    const metrics = createMetrics({ process: false })
    const b = await deployment.open({
      events: {
        emit(name, data) {
          if (name.startsWith('send.')) seen.push(name)
          metrics.emit(name, data)
        },
      },
    })
    // B watches; A signs. Neither broadcasts.
    const watch = watchSendBacklog(b.service.runtime, { intervalMs: 3_600_000 })
    let c: typeof a | undefined
    try {
      const { addresses } = resultOf(
        'create_wallet',
        await a.submit('create_wallet', { walletName: 'waiting', accounts: [ETHEREUM_ACCOUNT] }),
      )
      await chain.fund(addresses[0] as string, 10n ** 18n)
      a.clock.set(Date.now())
      const reply = await a.submit('eth_send_transaction', {
        from: addresses[0],
        caip2: CAIP2,
        calls: [{ to: DEAD, value: '1' }],
      })
      const { sendTransactionStatusId } = resultOf('eth_send_transaction', reply)
      a.clock.advance(1_000)
      await new Promise((resolve) => setTimeout(resolve, 100))
      await watch.refresh()
      expect(watch.latest()).toMatchObject({ worker: false })
      expect(watch.latest().open).toContainEqual({
        chain: 'eip155',
        status: 'PENDING',
        count: 1,
        oldestSeconds: 1,
      })
      expect((await b.service.readiness()).sends).toEqual(watch.latest())
      expect((await a.query('get_send_transaction_status', { sendTransactionStatusId })).body.txStatus).toBe(
        'PENDING',
      )
      a.clock.advance(STALLED_SECONDS * 1000)
      await watch.refresh()
      expect(seen).toContain('send.stalled')
      expect(await metrics.render()).toContain(
        `latchkey_sends_oldest_open_seconds{chain="eip155",status="PENDING"} ${STALLED_SECONDS + 1}`,
      )

      // An instance that runs the worker takes it from the shared database (on the real clock again:
      // the node's blocks are stamped with it).
      a.clock.set(Date.now())
      c = await deployment.open({ sending: { pollIntervalMs: 20, worker: true } })
      expect((await waitForSend(b, sendTransactionStatusId, { timeoutMs: 30_000 })).txStatus).toBe('INCLUDED')
      await watch.refresh()
      expect(seen).toContain('send.unstalled')
      expect(watch.latest().open.filter((entry) => entry.count > 0)).toEqual([])
    } finally {
      watch.stop()
      for (const h of [a, b, c]) await h?.service.close()
    }
  })
  it("one signed transaction sent to both at once is one send; an end user's open sends raced over both stop at the cap", async () => {
    const [a, b] = await twoInstances('open_sends', { sending: { worker: false } })
    const instances = [a!, b!]
    /** A transfer from a fresh funded outside key at nonce 5: the node would only queue it. */
    const stuck = async () => {
      const key = addr.random()
      await chain.fund(key.address, 10n ** 16n)
      return Transaction.prepare({
        to: DEAD,
        value: 1n,
        nonce: 5n,
        chainId: 31337n,
        maxFeePerGas: 2n * 10n ** 10n,
        maxPriorityFeePerGas: 10n ** 9n,
      })
        .signBy(key.privateKey)
        .toHex()
    }
    // Each at a clock of its own: the same request signed at the same time is one activity anyway.
    const sendRaw = (i: number, signedTransaction: string, as: { organizationId: string; as: never }) => {
      a!.clock.advance(1)
      return instances[i % 2]!.submit('eth_send_raw_transaction', { signedTransaction, caip2: CAIP2 }, as)
    }
    const user = await endUser(a!)
    const as = user.as as { organizationId: string; as: never }
    const open = async () =>
      (await a!.service.store.findBy('sendTransactions', 'organizationId', user.organizationId)).filter(
        (row) => row.status === 'PENDING' || row.status === 'BROADCASTED',
      )
    const same = await stuck()
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => sendRaw(i, same, as)))
    expect(replies.map((reply) => reply.status)).toEqual(Array(8).fill(200))
    expect(await open()).toHaveLength(1)
    const max = MAX_OPEN_SENDS.subOrganization
    for (let i = 1; i < max - 3; i++) expect((await sendRaw(i, await stuck(), as)).status).toBe(200)
    const distinct = await Promise.all(Array.from({ length: 8 }, () => stuck()))
    const raced = await Promise.all(distinct.map((tx, i) => sendRaw(i, tx, as)))
    expect(raced.map((reply) => reply.status).sort()).toEqual([200, 200, 200, 412, 412, 412, 412, 412])
    expect(await open()).toHaveLength(max)
    for (const h of [a, b]) await h!.service.close()
  })
})
