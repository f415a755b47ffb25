// What an end user could make the sponsor pay past the operator's bounds (security review of
// sponsored sending): budgets multiplied by users they create, gas limits that pass the simulation
// and not the chain, replacements after their sub-organization is deleted.
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { Transaction } from 'micro-eth-signer'
import { serializeTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nonceIdOf } from '../../src/sending/sendingState.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { ETHEREUM_ACCOUNT, resultOf, testKey } from '../../src/testing/harness.ts'
import {
  type Chain,
  endUser,
  erc20Call,
  refusingNode,
  sendCount,
  sponsoredService,
  startChain,
  waitForReplacements,
  waitForSend,
} from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'
const GWEI = 10n ** 9n

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

describe('per-user daily caps count end users', () => {
  it("users an end user creates in their sub-organization share its budget; another end user's is their own", async () => {
    const gasLimit = 300_000
    // Room for one send per end user per day, in gas and in wei.
    const h = await sponsoredService(chain, { perUserPerDay: gasLimit + 1 })
    const user = await endUser(h)
    const mint = (as: unknown, from = user.from) => {
      h.clock.set(Date.now())
      return h.submit(
        'eth_send_transaction',
        {
          from,
          caip2: CAIP2,
          sponsor: true,
          gasLimit: String(gasLimit),
          calls: [erc20Call('mint', DEAD, 1n)],
        },
        as as never,
      )
    }
    expect((await mint(user.as)).status).toBe(200)
    expect((await mint(user.as)).body.details).toMatchObject({
      errorCode: 'GAS_CAP_EXCEEDED',
      cap: 'per-user daily',
    })
    // The end user, root of their sub-organization, makes three more users and puts them in the quorum.
    const keys = Array.from({ length: 3 }, () => testKey())
    const created = resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: keys.map((key, i) => ({
            userName: `extra ${i}`,
            apiKeys: [key.apiKey()],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          })),
        },
        user.as,
      ),
    )
    h.clock.advance(1)
    resultOf(
      'update_root_quorum',
      await h.submit(
        'update_root_quorum',
        { threshold: 1, userIds: [user.userIds[0], ...created.userIds] },
        user.as,
      ),
    )
    for (const key of keys) {
      const reply = await mint({ organizationId: user.organizationId, as: key })
      expect({ status: reply.status, ...reply.body.details }).toMatchObject({
        status: 429,
        errorCode: 'GAS_CAP_EXCEEDED',
        cap: 'per-user daily',
      })
    }
    expect(await sendCount(h)).toBe(1)
    // Another end user has a budget of their own.
    const other = await endUser(h)
    const theirs = await other.send({
      sponsor: true,
      gasLimit: String(gasLimit),
      calls: [erc20Call('mint', DEAD, 1n)],
    })
    expect(theirs.status).toBe(200)
    // In the parent organization itself, each user is counted on their own.
    const parentAccount = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'parent', accounts: [ETHEREUM_ACCOUNT] }),
    ).addresses[0] as string
    expect((await mint({}, parentAccount)).status).toBe(200)
    // The gas rows (each send has its wei row too): by sub-organization, and by user in the parent.
    // (what a mined one is given back is a row of its own: not counted here).
    const rows = (await h.service.store.all('gasUsage')).filter(
      (row) => !row.userDay.endsWith('|wei') && !row.id.endsWith('.settled'),
    )
    const whom = rows.map((row) => row.userDay.split('|')[1]!)
    expect(whom).toHaveLength(3)
    expect(whom).toContain(user.organizationId)
    expect(whom).toContain(other.organizationId)
    const [inParent] = whom.filter((id) => id !== user.organizationId && id !== other.organizationId)
    expect((await h.service.store.get('users', inParent!))?.organizationId).toBe(h.organizationId)
    await h.service.close()
  }, 60_000)

  it("a sub-organization's budget of the day counts its caller's rows counted per user before", async () => {
    const gasLimit = 300_000
    const h = await sponsoredService(chain, { perUserPerDay: gasLimit + 1 })
    const user = await endUser(h)
    h.clock.set(Date.now())
    const day = new Date(h.clock.now()).toISOString().slice(0, 10)
    // A row as the previous version wrote it: parent | caller's user id | day.
    await h.service.store.transaction((tx) =>
      tx.put('gasUsage', {
        id: 'earlier-row',
        userDay: `${h.organizationId}|${user.userIds[0]}|${day}`,
        organizationMonth: `${h.organizationId}|${day.slice(0, 7)}`,
        gas: String(gasLimit),
        sendTransactionId: 'earlier-send',
        createdAt: h.clock.now(),
        updatedAt: h.clock.now(),
      }),
    )
    const reply = await user.send({
      sponsor: true,
      gasLimit: String(gasLimit),
      calls: [erc20Call('mint', DEAD, 1n)],
    })
    expect(reply.body.details).toMatchObject({ errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-user daily' })
    await h.service.close()
  }, 60_000)
})

describe("a sponsored batch's gas limit covers the signed transaction", () => {
  const mint = (amount = 1n) => erc20Call('mint', DEAD, amount)
  const pendingNonce = async (address: string) =>
    BigInt((await chain.rpc('eth_getTransactionCount', [address, 'pending'])) as string)

  it('a gas limit enough for the simulated calls and not for the signed batch is refused naming the field; its minimum is included', async () => {
    const h = await sponsoredService(chain)
    const sponsor = sponsorAddress(h.service.runtime)!
    const user = await endUser(h)
    const first = resultOf('eth_send_transaction', await user.send({ sponsor: true, calls: [mint()] }))
      .sendTransactionStatusId as string
    expect((await waitForSend(h, first, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
      'INCLUDED',
    )
    // Delegated now: 45,000 to 55,000 passed the calls' simulation and ran out of gas on chain.
    const [balance, nonce, sends] = [
      await chain.balance(sponsor),
      await pendingNonce(sponsor),
      await sendCount(h),
    ]
    let minimum = 0n
    for (const gasLimit of [45_000, 55_000, 21_000]) {
      const reply = await user.send({ sponsor: true, gasLimit: String(gasLimit), calls: [mint()] })
      expect({
        status: reply.status,
        errorCode: reply.body.details?.errorCode,
        field: reply.body.details?.field,
      }).toEqual({
        status: 400,
        errorCode: 'FIELD_INVALID',
        field: 'parameters.gasLimit',
      })
      expect(reply.body.message).toContain(`needs at least ${reply.body.details.minimum}`)
      minimum = BigInt(reply.body.details.minimum)
    }
    expect(minimum).toBeGreaterThan(55_000n)
    expect(minimum).toBeLessThan(70_000n)
    expect([await chain.balance(sponsor), await pendingNonce(sponsor), await sendCount(h)]).toEqual([
      balance,
      nonce,
      sends,
    ])
    const id = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, gasLimit: String(minimum), calls: [mint()] }),
    ).sendTransactionStatusId as string
    expect((await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
      'INCLUDED',
    )
    await h.service.close()
  }, 60_000)

  it('counts the authorization of an account that does not delegate yet, and the floor of a long call data', async () => {
    const h = await sponsoredService(chain)
    // Not delegated: the simulated calls need about 42,000, the signed transaction about 102,000.
    const fresh = await endUser(h)
    const low = await fresh.send({ sponsor: true, gasLimit: '90000', calls: [mint()] })
    expect(low).toMatchObject({ status: 400, body: { details: { field: 'parameters.gasLimit' } } })
    const minimum = low.body.details.minimum as string
    expect(BigInt(minimum)).toBeGreaterThan(100_000n)
    const id = resultOf(
      'eth_send_transaction',
      await fresh.send({ sponsor: true, gasLimit: minimum, calls: [mint()] }),
    ).sendTransactionStatusId as string
    expect((await waitForSend(h, id, { organizationId: fresh.organizationId, as: fresh.as })).txStatus).toBe(
      'INCLUDED',
    )
    // 4,000 bytes of call data: a gas limit that runs the calls but is under EIP-7623's floor of
    // the data was taken by the node and never mined, the sponsor's nonce left unused.
    const long = { ...mint(2n), data: `${mint(2n).data}${'11'.repeat(4000)}` }
    const floorGap = await fresh.send({ sponsor: true, gasLimit: '190000', calls: [long] })
    expect(floorGap).toMatchObject({ status: 400, body: { details: { field: 'parameters.gasLimit' } } })
    const enough = floorGap.body.details.minimum as string
    expect(BigInt(enough)).toBeGreaterThan(190_000n)
    const longId = resultOf(
      'eth_send_transaction',
      await fresh.send({ sponsor: true, gasLimit: enough, calls: [long] }),
    ).sendTransactionStatusId as string
    expect(
      (await waitForSend(h, longId, { organizationId: fresh.organizationId, as: fresh.as })).txStatus,
    ).toBe('INCLUDED')
    await h.service.close()
  }, 60_000)

  it('a gas limit under the intrinsic gas is 400 naming the field, never a 500, sponsored or not', async () => {
    const h = await sponsoredService(chain)
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'payer', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0] as string
    await chain.fund(from, 10n ** 18n)
    const send = (parameters: Record<string, unknown>) => {
      h.clock.set(Date.now())
      return h.submit('eth_send_transaction', { from, caip2: CAIP2, gasLimit: '21000', ...parameters })
    }
    for (const parameters of [
      { calls: [mint()] },
      { calls: [mint(), mint(2n)] },
      { sponsor: true, calls: [mint()] },
    ]) {
      const reply = await send(parameters)
      expect({ status: reply.status, field: reply.body.details?.field }, JSON.stringify(parameters)).toEqual({
        status: 400,
        field: 'parameters.gasLimit',
      })
    }
    expect(await sendCount(h)).toBe(0)
    // Over the intrinsic gas of 100 bytes of data (22,600) but under EIP-7623's floor for them
    // (25,000): refused before anything is signed, naming the least it takes; that passes.
    const data = { calls: [{ to: DEAD, value: '0', data: `0x${'ab'.repeat(100)}` }] }
    const underFloor = await send({ ...data, gasLimit: '24999' })
    expect({
      status: underFloor.status,
      field: underFloor.body.details?.field,
      minimum: underFloor.body.details?.minimum,
    }).toEqual({ status: 400, field: 'parameters.gasLimit', minimum: '25000' })
    expect(underFloor.body.message).toContain("EIP-7623's floor")
    expect(await sendCount(h)).toBe(0)
    const atFloor = resultOf('eth_send_transaction', await send({ ...data, gasLimit: '25000' }))
    expect((await waitForSend(h, atFloor.sendTransactionStatusId as string)).txStatus).toBe('INCLUDED')
    await h.service.close()
  }, 60_000)
})

describe('a sponsored send whose sub-organization is deleted', () => {
  it('is never replaced: no raise past the fee ceiling, none uncounted by the wei caps', async () => {
    const gasLimit = 200_000n
    const ceiling = 4n * GWEI
    const h = await sponsoredService(
      chain,
      { maxFeePerGas: String(ceiling), perUserPerDayWei: String(gasLimit * ceiling) },
      { replaceAfterMs: 200 },
    )
    const user = await endUser(h)
    await chain.rpc('evm_setAutomine', [false])
    try {
      const reply = await user.send({
        sponsor: true,
        gasLimit: String(gasLimit),
        maxFeePerGas: String(ceiling),
        calls: [erc20Call('mint', DEAD, 1n)],
      })
      const id = resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
      const signed = (await h.service.store.get('sendTransactions', id))!.signedTransaction
      h.clock.advance(1)
      resultOf(
        'delete_sub_organization',
        await h.submit('delete_sub_organization', { deleteWithoutExport: true }, user.as),
      )
      // Stuck (nothing is mined) well past replaceAfterMs: the worker gives up replacing it.
      const row = await waitForReplacements(h, id, 3)
      expect(row.replacements).toBe(3)
      expect(row.priorHashes ?? []).toEqual([])
      expect(row.signedTransaction).toBe(signed)
      expect(BigInt(row.fees!.maxFeePerGas)).toBe(ceiling)
      const wei = (await h.service.store.all('gasUsage')).filter((r) => r.userDay.endsWith('|wei'))
      expect(wei.map((r) => BigInt(r.gas))).toEqual([gasLimit * ceiling])
    } finally {
      await chain.rpc('evm_setAutomine', [true])
    }
    await chain.rpc('evm_mine', [])
    await h.service.close()
  }, 60_000)
})

describe("a stuck sponsored send's replacements", () => {
  it("raise the tip only up to the operator's max_priority_fee_per_gas: a tip its raises would pass it is refused at signing", async () => {
    const tipCeiling = GWEI
    const h = await sponsoredService(
      chain,
      { maxFeePerGas: String(100n * GWEI), maxPriorityFeePerGas: String(tipCeiling) },
      { replaceAfterMs: 100 },
    )
    const user = await endUser(h)
    const send = (tip: bigint) =>
      user.send({
        sponsor: true,
        gasLimit: '200000',
        maxFeePerGas: String(10n * GWEI),
        maxPriorityFeePerGas: String(tip),
        calls: [erc20Call('mint', DEAD, 1n)],
      })
    // 0.8 gwei: one replacement (+25%) reaches the ceiling, a second would pass it, and the send
    // would then wait at its price whatever the base fee: refused, naming the most it may start at
    // (three raises of 25% reach the ceiling).
    const refused = await send((8n * GWEI) / 10n)
    expect(refused.status).toBe(400)
    expect(refused.body.details).toMatchObject({
      errorCode: 'FIELD_INVALID',
      field: 'parameters.maxPriorityFeePerGas',
      maximum: String((512n * GWEI) / 1000n),
      ceiling: String(tipCeiling),
    })
    expect(await sendCount(h)).toBe(0)
    await chain.rpc('evm_setAutomine', [false])
    try {
      const id = resultOf('eth_send_transaction', await send((512n * GWEI) / 1000n))
        .sendTransactionStatusId as string
      const row = await waitForReplacements(h, id, 3)
      expect(row.replacements).toBe(3)
      expect(row.priorHashes ?? []).toHaveLength(3)
      const tip = (Transaction.fromHex(row.signedTransaction).raw as { maxPriorityFeePerGas: bigint })
        .maxPriorityFeePerGas
      expect(tip).toBe(tipCeiling)
    } finally {
      await chain.rpc('evm_setAutomine', [true])
    }
    await chain.rpc('evm_mine', [])
    await h.service.close()
  }, 60_000)
})

describe("an account's batch nonces, from a node a block behind", () => {
  it("a batch signed just after one ran, the node still answering the delegate's old nonce: the next nonce, not the one used, and it runs", async () => {
    // A node behind a load balancer may answer a count a block old: here, `nonce()` of the account's
    // delegate answers 0 once the first batch has run with it.
    let behind = false
    const NONCE_CALL = `0x${bytesToHex(keccak_256(utf8ToBytes('nonce()')).slice(0, 4))}`
    const lagging: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as {
        id: number
        method: string
        params: [{ data?: string }]
      }
      if (behind && body.method === 'eth_call' && body.params[0]?.data === NONCE_CALL)
        return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: `0x${'0'.repeat(64)}` }), {
          headers: { 'content-type': 'application/json' },
        })
      return fetch(input, init)
    }
    const h = await sponsoredService(chain, {}, {}, { fetch: lagging })
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 18n)
    const as = { organizationId: user.organizationId, as: user.as }
    const batch = async (amount: bigint) =>
      resultOf(
        'eth_send_transaction',
        await user.send({
          calls: [erc20Call('mint', user.from, amount), erc20Call('mint', user.from, amount)],
          gasLimit: '400000',
        }),
      ).sendTransactionStatusId as string
    expect((await waitForSend(h, await batch(1n), as)).txStatus).toBe('INCLUDED')
    behind = true
    const told = await h.query(
      'get_nonces',
      { address: user.from, caip2: CAIP2, gasStationNonce: true },
      user.as,
    )
    expect(told.body).toEqual({ gasStationNonce: '1' })
    // Without the floor the service keeps, it signs nonce 0 again, and the batch reverts.
    const second = await waitForSend(h, await batch(2n), as)
    expect([second.txStatus, second.error?.message]).toEqual(['INCLUDED', undefined])
    expect(await chain.tokenBalance(user.from)).toBe(6n)
    await h.service.close()
  }, 60_000)
})

describe('a sponsored batch whose authorization is no longer valid when it is mined', () => {
  /** A `fetch` that holds the broadcast of every type-4 transaction until `release`. */
  function heldBatches() {
    let release = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    const held: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string; params: string[] }
      if (body.method === 'eth_sendRawTransaction' && body.params[0]!.startsWith('0x04')) await hold
      return fetch(input, init)
    }
    return { fetch: held, release: () => release() }
  }
  const nonceOf = async (address: string) =>
    BigInt((await chain.rpc('eth_getTransactionCount', [address, 'latest'])) as string)
  /** A 0-value transfer of `user` to itself at `nonce`, signed by the service for sending elsewhere. */
  async function signedElsewhere(
    h: Awaited<ReturnType<typeof sponsoredService>>,
    user: Awaited<ReturnType<typeof endUser>>,
    nonce: bigint,
  ) {
    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: 31337,
      nonce: Number(nonce),
      to: user.from as `0x${string}`,
      value: 0n,
      gas: 21_000n,
      maxFeePerGas: 10n * GWEI,
      maxPriorityFeePerGas: GWEI,
    })
    h.clock.set(Date.now())
    const reply = await h.submit(
      'sign_transaction',
      { signWith: user.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned },
      user.as,
    )
    return (resultOf('sign_transaction', reply) as { signedTransaction: string }).signedTransaction
  }

  it('ran none of its calls: it is FAILED, saying why, never INCLUDED', async () => {
    const node = heldBatches()
    const h = await sponsoredService(chain, {}, {}, { fetch: node.fetch })
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 18n)
    const id = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, calls: [erc20Call('mint', user.from, 5n)] }),
    ).sendTransactionStatusId as string
    // While it waits to be broadcast, the account spends the nonce its authorization carries (a
    // transaction it signed for elsewhere), so the authorization is skipped when the batch is mined.
    const signedTransaction = await signedElsewhere(h, user, await nonceOf(user.from))
    await chain.rpc('eth_sendRawTransaction', [`0x${signedTransaction.replace(/^0x/, '')}`])
    node.release()
    const final = await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })
    expect(final.txStatus).toBe('FAILED')
    expect(final.error.message).toContain('the batch did not run')
    expect(await chain.tokenBalance(user.from)).toBe(0n)
    await h.service.close()
  }, 60_000)

  /**
   * What a sponsored send refused after its authorization took the account's nonce leaves (no fill
   * takes it: the account may hold nothing to pay one with): the service's counter 3 ahead of the node.
   */
  async function counterAhead(h: Awaited<ReturnType<typeof sponsoredService>>, address: string) {
    const start = await nonceOf(address)
    await h.service.store.transaction((tx) =>
      tx.put('nonces', {
        id: nonceIdOf(CAIP2, address),
        next: String(start + 3n),
        createdAt: Date.now(),
        updatedAt: Date.now(),
      }),
    )
    return start
  }

  it("a transaction signed elsewhere and sent through the service at a hole's nonce takes the hole: the next send does not take it again", async () => {
    const h = await sponsoredService(chain)
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 18n)
    const start = await nonceOf(user.from)
    // A hole at the node's count, the counter one past it.
    await h.service.store.transaction((tx) =>
      tx.put('nonces', {
        id: nonceIdOf(CAIP2, user.from),
        next: String(start + 1n),
        holes: [String(start)],
        createdAt: Date.now(),
        updatedAt: Date.now(),
      }),
    )
    const signedTransaction = await signedElsewhere(h, user, start)
    resultOf(
      'eth_send_raw_transaction',
      await h.submit('eth_send_raw_transaction', { signedTransaction, caip2: CAIP2 }, user.as),
    )
    expect(await h.service.store.get('nonces', nonceIdOf(CAIP2, user.from))).toMatchObject({
      next: String(start + 1n),
    })
    expect((await h.service.store.get('nonces', nonceIdOf(CAIP2, user.from)))!.holes).toBeUndefined()
    const next = resultOf(
      'eth_send_transaction',
      await user.send({ calls: [erc20Call('mint', user.from, 1n)] }),
    ).sendTransactionStatusId as string
    expect((await h.service.store.get('sendTransactions', next))!.nonce).toBe(String(start + 1n))
    expect((await waitForSend(h, next, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
      'INCLUDED',
    )
    await h.service.close()
  }, 60_000)

  it("takes the node's nonce for its authorization when nothing of the account is in flight, past a nonce an earlier one left unused", async () => {
    const h = await sponsoredService(chain)
    const user = await endUser(h)
    await counterAhead(h, user.from)
    const id = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, calls: [erc20Call('mint', user.from, 7n)] }),
    ).sendTransactionStatusId as string
    expect((await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).txStatus).toBe(
      'INCLUDED',
    )
    expect(await chain.tokenBalance(user.from)).toBe(7n)
    await h.service.close()
  }, 60_000)
  it("and one mined after it, whose authorization was skipped for it: both nonces are the account's next sends", async () => {
    let release = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    // The node refuses the first sponsored batch, once released, and takes the second.
    let first: string | undefined
    const refuse = (raw: string) => {
      if (!raw.startsWith('0x04')) return false
      first ??= raw
      return first === raw
    }
    const h = await sponsoredService(chain, {}, {}, { fetch: refusingNode(refuse, { hold }) })
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 18n)
    const start = await nonceOf(user.from)
    const as = { organizationId: user.organizationId, as: user.as }
    const sponsoredSend = async (amount: bigint) =>
      resultOf(
        'eth_send_transaction',
        await user.send({ sponsor: true, calls: [erc20Call('mint', user.from, amount)] }),
      ).sendTransactionStatusId as string
    const ownSend = async (amount: bigint) =>
      resultOf('eth_send_transaction', await user.send({ calls: [erc20Call('mint', user.from, amount)] }))
        .sendTransactionStatusId as string
    const refused = await sponsoredSend(5n)
    // Signed while the first is on its way: its authorization takes the nonce after the first's.
    const skipped = await sponsoredSend(7n)
    release()
    expect((await waitForSend(h, refused, as)).txStatus).toBe('FAILED')
    const mined = await waitForSend(h, skipped, as)
    expect([mined.txStatus, mined.error?.message]).toEqual([
      'FAILED',
      expect.stringContaining('the batch did not run'),
    ])
    // Both authorizations' nonces are unused: the account's next two sends take them, in order.
    const sends = [await ownSend(1n), await ownSend(2n), await ownSend(3n)]
    const nonces = await Promise.all(
      sends.map(async (id) => (await h.service.store.get('sendTransactions', id))!.nonce),
    )
    expect(nonces).toEqual([String(start), String(start + 1n), String(start + 2n)])
    for (const id of sends) expect((await waitForSend(h, id, as)).txStatus).toBe('INCLUDED')
    expect(await chain.tokenBalance(user.from)).toBe(6n)
    await h.service.close()
  }, 60_000)

  it("a refused one whose authorization's nonce a later send of the account passed: the account's next send takes that nonce, and its sends are included", async () => {
    let release = () => {}
    const hold = new Promise<void>((resolve) => {
      release = resolve
    })
    // The node refuses every type-4 transaction (the sponsored batch), once released.
    const h = await sponsoredService(
      chain,
      {},
      {},
      { fetch: refusingNode((raw) => raw.startsWith('0x04'), { hold }) },
    )
    const user = await endUser(h)
    await chain.fund(user.from, 10n ** 18n)
    const start = await nonceOf(user.from)
    const sponsored = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, calls: [erc20Call('mint', user.from, 5n)] }),
    ).sendTransactionStatusId as string
    // Signed while the batch is on its way: the nonce after its authorization's.
    const own = resultOf(
      'eth_send_transaction',
      await user.send({ calls: [erc20Call('mint', user.from, 3n)] }),
    ).sendTransactionStatusId as string
    expect((await h.service.store.get('sendTransactions', own))!.nonce).toBe(String(start + 1n))
    release()
    const as = { organizationId: user.organizationId, as: user.as }
    expect((await waitForSend(h, sponsored, as)).txStatus).toBe('FAILED')
    // A client that signs elsewhere is told the same next nonce.
    const told = await h.query('get_nonces', { address: user.from, caip2: CAIP2, nonce: true }, user.as)
    expect(told.body).toEqual({ nonce: String(start) })
    // No fill takes the authorization's nonce: the next send does. Without it, it takes the nonce
    // after the last and all wait in the node's queue for good.
    const next = resultOf(
      'eth_send_transaction',
      await user.send({ calls: [erc20Call('mint', user.from, 2n)] }),
    ).sendTransactionStatusId as string
    expect((await h.service.store.get('sendTransactions', next))!.nonce).toBe(String(start))
    for (const id of [next, own]) expect((await waitForSend(h, id, as)).txStatus).toBe('INCLUDED')
    expect(await nonceOf(user.from)).toBe(start + 2n)
    expect(await chain.tokenBalance(user.from)).toBe(5n)
    // Taken once: the send after them takes the next nonce.
    const last = resultOf(
      'eth_send_transaction',
      await user.send({ calls: [erc20Call('mint', user.from, 1n)] }),
    ).sendTransactionStatusId as string
    expect((await waitForSend(h, last, as)).txStatus).toBe('INCLUDED')
    expect(await nonceOf(user.from)).toBe(start + 3n)
    await h.service.close()
  }, 60_000)
})
