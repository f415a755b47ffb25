import {
  type Address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Encoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Instruction,
  pipe,
  type SignatureBytes,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingDurableNonce,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import {
  AccountState,
  getMintEncoder,
  getTokenDecoder,
  getTokenEncoder,
  getTransferCheckedInstruction,
  getTransferInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  airdrop,
  LAMPORTS_PER_SIGNATURE,
  type SolanaNode,
  startSolanaNode,
} from '../../src/dev/startSolanaNode.ts'
import { BLOCKHASH_DOUBT_MS } from '../../src/sending/solanaSender.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import {
  createHarness,
  fakeClock,
  type Harness,
  type Json,
  resultOf,
  SOLANA_ACCOUNT,
  testKey,
} from '../../src/testing/harness.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'
import { waitForSend } from './sendSupport.ts'

let node: SolanaNode

beforeAll(async () => {
  node = await startSolanaNode()
})

afterAll(async () => {
  await node?.close()
})

async function service(caps = {}, fetch?: typeof globalThis.fetch, url = node.url): Promise<Harness> {
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    rpc: { [node.caip2]: url },
    ...(fetch ? { fetch } : {}),
    sending: { pollIntervalMs: 20 },
    sponsorship: { delegates: {}, caps },
  })
  airdrop(node, solanaSponsor(h), 10n ** 9n)
  return h
}

const solanaSponsor = (h: Harness) => sponsorAddress(h.service.runtime, 'default', 'solana')!

async function newAccount(h: Harness): Promise<string> {
  const { addresses } = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: `W${Math.random()}`, accounts: [SOLANA_ACCOUNT] }),
  )
  return addresses[0]
}

/** An unsigned v0 wire transaction (hex) paid by `feePayer` with the node's current blockhash. */
/** An unsigned transaction on the node's latest blockhash. */
const unsigned = (feePayer: string, instructions: Instruction[]) =>
  solanaTransaction(feePayer, instructions, node.svm.latestBlockhash())

const MINT = '5cxzQ3ZyUe7Vv4EwXbq1ymEW3nWW4Rxj27GtuGkRLwrn' as Address

/** A token mint and token accounts of `owners` holding `amounts`, written straight into the SVM. */
async function tokenAccounts(owners: string[], amounts: bigint[]): Promise<Address[]> {
  const rent = node.svm.minimumBalanceForRentExemption(165n)
  node.svm.setAccount({
    address: MINT,
    data: new Uint8Array(
      getMintEncoder().encode({
        mintAuthority: null,
        supply: 10n ** 12n,
        decimals: 6,
        isInitialized: true,
        freezeAuthority: null,
      }),
    ),
    executable: false,
    lamports: node.svm.minimumBalanceForRentExemption(82n),
    programAddress: TOKEN_PROGRAM_ADDRESS,
    space: 82n,
  } as never)
  return Promise.all(
    owners.map(async (owner, index) => {
      const { address } = await generateKeyPairSigner()
      node.svm.setAccount({
        address,
        data: new Uint8Array(
          getTokenEncoder().encode({
            mint: MINT,
            owner: owner as Address,
            amount: amounts[index]!,
            delegate: null,
            state: AccountState.Initialized,
            isNative: null,
            delegatedAmount: 0n,
            closeAuthority: null,
          }),
        ),
        executable: false,
        lamports: rent,
        programAddress: TOKEN_PROGRAM_ADDRESS,
        space: 165n,
      } as never)
      return address
    }),
  )
}

const tokenBalance = (account: Address) => {
  const found = node.svm.getAccount(account)
  if (!found.exists) throw new Error(`no token account ${account}`)
  return getTokenDecoder().decode(found.data).amount
}

const send = (h: Harness, parameters: Json, as: Parameters<Harness['submit']>[2] = {}) => {
  h.clock.set(Date.now())
  return h.submit('sol_send_transaction', { caip2: node.caip2, ...parameters } as never, as)
}

/**
 * Waits for the node to refuse a send's blockhash (its first broadcast) and checks the send is
 * still PENDING, sent again while its blockhash may be one the node has not seen yet.
 */
async function refusedBlockhash(h: Harness, sendTransactionStatusId: string, calls: number): Promise<void> {
  const until = Date.now() + 10_000
  while (!node.calls.slice(calls).includes('sendTransaction')) {
    if (Date.now() > until) throw new Error('the send was never broadcast')
    h.clock.set(Math.max(h.clock.now(), Date.now()))
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const reply = await h.query('get_send_transaction_status', { sendTransactionStatusId })
  expect(reply.body.txStatus).toBe('PENDING')
}

/** Makes a send look `BLOCKHASH_DOUBT_MS` older: no blockhash of when it was made can still be valid. */
async function pastDoubt(h: Harness, sendTransactionStatusId: string): Promise<void> {
  await h.service.store.transaction(async (tx) => {
    const row = (await tx.get('sendTransactions', sendTransactionStatusId))!
    await tx.put('sendTransactions', { ...row, createdAt: row.createdAt - BLOCKHASH_DOUBT_MS })
  })
}

const sends = async (h: Harness) => (await h.service.store.all('sendTransactions')).length

/** A daily spending limit of `amount` of `asset` on `user`'s account: its id. */
const dailyLimit = async (h: Harness, user: string, asset: Json, amount: bigint) =>
  resultOf(
    'latchkey_create_spending_limit',
    await h.submit('latchkey_create_spending_limit', {
      spendingLimitName: 'a day',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: user },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset,
      amount: String(amount),
    }),
  ).spendingLimitId as string

/**
 * A new account holding 10 units of a token, and what sends one unit of it between its two token
 * accounts, sponsored, after `instructions`: the reply.
 */
async function sponsoredTokenTransfers(h: Harness) {
  const user = await newAccount(h)
  const [source, destination] = await tokenAccounts([user, user], [10n, 0n])
  return (...instructions: Instruction[]) =>
    send(h, {
      unsignedTransaction: unsigned(user, [
        ...instructions,
        getTransferInstruction({
          source: source!,
          destination: destination!,
          authority: createNoopSigner(user as Address),
          amount: 1n,
        }),
      ]),
      signWiths: [user],
      sponsor: true,
    })
}

/** A funded account holding 1,000 units of `MINT` under a daily limit of 100 of them, and a token account to send to. */
async function underSplLimit(h: Harness) {
  const user = await newAccount(h)
  airdrop(node, user, 10n ** 9n)
  const [source, destination] = await tokenAccounts(
    [user, (await generateKeyPairSigner()).address],
    [1000n, 0n],
  )
  const spendingLimitId = await dailyLimit(
    h,
    user,
    { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: node.caip2, mint: MINT },
    100n,
  )
  return { user, source: source!, destination: destination!, spendingLimitId }
}

/** A spending limit as `latchkey_list_spending_limits` answers it. */
const limitOf = async (h: Harness, spendingLimitId: string) =>
  (await h.query('latchkey_list_spending_limits', {})).body.spendingLimits.find(
    (limit: { spendingLimitId: string }) => limit.spendingLimitId === spendingLimitId,
  )

describe('sol_send_transaction', () => {
  it('sponsored: a token transfer from a 0-SOL account executes with the sponsor as fee payer', async () => {
    const h = await service()
    const user = await newAccount(h)
    const sponsor = solanaSponsor(h)
    const [source, destination] = await tokenAccounts(
      [user, (await generateKeyPairSigner()).address],
      [100n, 0n],
    )
    const transfer = getTransferInstruction({
      source: source!,
      destination: destination!,
      authority: createNoopSigner(user as Address),
      amount: 40n,
    })
    const sponsorBefore = node.balance(sponsor)
    const reply = await send(h, {
      unsignedTransaction: unsigned(user, [transfer]),
      signWiths: [user],
      sponsor: true,
    })
    const { sendTransactionStatusId } = resultOf('sol_send_transaction', reply)
    expect(reply.body.activity.result).toEqual({ solSendTransactionResultV2: { sendTransactionStatusId } })
    const status = await waitForSend(h, sendTransactionStatusId)
    expect(status).toMatchObject({ txStatus: 'INCLUDED', solana: { signature: expect.any(String) } })
    expect(tokenBalance(source!)).toBe(60n)
    expect(tokenBalance(destination!)).toBe(40n)
    // The user holds no SOL before or after; the sponsor paid both signatures' fee.
    expect(node.balance(user)).toBe(0n)
    expect(sponsorBefore - node.balance(sponsor)).toBe(2n * LAMPORTS_PER_SIGNATURE)
    // What was broadcast names the sponsor as fee payer and carries both signatures.
    const row = (await h.service.store.get('sendTransactions', sendTransactionStatusId))!
    const sent = getTransactionDecoder().decode(getBase64Encoder().encode(row.signedTransaction))
    const message = getCompiledTransactionMessageDecoder().decode(sent.messageBytes)
    expect(message.staticAccounts.slice(0, message.header.numSignerAccounts)).toEqual([sponsor, user])
    expect(Object.values(sent.signatures).every((signature) => signature !== null)).toBe(true)
    expect(row).toMatchObject({ sponsored: true, sender: sponsor, account: user })
    await h.service.close()
  })

  it('unsponsored: a SOL transfer from a funded account, paid by it', async () => {
    const h = await service()
    const user = await newAccount(h)
    airdrop(node, user, 10n ** 9n)
    const { address: to } = await generateKeyPairSigner()
    const reply = await send(h, {
      unsignedTransaction: unsigned(user, [
        getTransferSolInstruction({
          source: createNoopSigner(user as Address),
          destination: to,
          amount: 10n ** 7n,
        }),
      ]),
      signWiths: [user],
    })
    const { sendTransactionStatusId } = resultOf('sol_send_transaction', reply)
    expect(await waitForSend(h, sendTransactionStatusId)).toMatchObject({ txStatus: 'INCLUDED' })
    expect(node.balance(to)).toBe(10n ** 7n)
    expect(node.balance(user)).toBe(10n ** 9n - 10n ** 7n - LAMPORTS_PER_SIGNATURE)
    await h.service.close()
  })

  it('under a lamport limit, an unsponsored send counts its transfer and its fee, exactly what the account lost; a sponsored one only its transfer', async () => {
    const h = await service()
    const user = await newAccount(h)
    airdrop(node, user, 10n ** 9n)
    const spendingLimitId = await dailyLimit(
      h,
      user,
      { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: node.caip2 },
      10n ** 8n,
    )
    const used = async () => BigInt((await limitOf(h, spendingLimitId)).used)
    const transferTo = async (amount: bigint, sponsor: boolean) => {
      const { address: to } = await generateKeyPairSigner()
      const reply = await send(h, {
        unsignedTransaction: unsigned(user, [
          getTransferSolInstruction({ source: createNoopSigner(user as Address), destination: to, amount }),
        ]),
        signWiths: [user],
        ...(sponsor ? { sponsor: true } : {}),
      })
      const { sendTransactionStatusId } = resultOf('sol_send_transaction', reply)
      expect(await waitForSend(h, sendTransactionStatusId)).toMatchObject({ txStatus: 'INCLUDED' })
    }
    const before = node.balance(user)
    await transferTo(10n ** 7n, false)
    expect(await used()).toBe(before - node.balance(user))
    expect(await used()).toBe(10n ** 7n + LAMPORTS_PER_SIGNATURE)
    const sponsoredBefore = node.balance(user)
    await transferTo(10n ** 7n, true)
    expect(sponsoredBefore - node.balance(user)).toBe(10n ** 7n)
    expect(await used()).toBe(2n * 10n ** 7n + LAMPORTS_PER_SIGNATURE)
    await h.service.close()
  })

  it('a send the node refuses keeps what it reserved: its signer holds the whole signed transaction (the message it gave, the signature the status answers) and can broadcast it itself', async () => {
    const h = await service()
    // It holds no lamports yet: the node refuses its transfer, which cannot pay its fee.
    const user = await newAccount(h)
    const spendingLimitId = await dailyLimit(
      h,
      user,
      { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: node.caip2 },
      10n ** 7n + LAMPORTS_PER_SIGNATURE,
    )
    const { address: to } = await generateKeyPairSigner()
    const transfer = (amount: bigint) =>
      unsigned(user, [
        getTransferSolInstruction({ source: createNoopSigner(user as Address), destination: to, amount }),
      ])
    const unsignedTransaction = transfer(10n ** 7n)
    const reply = await send(h, { unsignedTransaction, signWiths: [user] })
    const status = await waitForSend(h, resultOf('sol_send_transaction', reply).sendTransactionStatusId)
    expect(status).toMatchObject({ txStatus: 'FAILED', txError: expect.stringMatching(/refused/) })
    // The signer funds its account, puts the status's signature on its own message, and sends it.
    airdrop(node, user, 10n ** 9n)
    const given = getTransactionDecoder().decode(Buffer.from(unsignedTransaction, 'hex'))
    const signature = getBase58Encoder().encode(status.solana.signature) as SignatureBytes
    const wire = getTransactionEncoder().encode({ ...given, signatures: { [user]: signature } })
    const answer = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'sendTransaction',
        params: [Buffer.from(wire).toString('base64'), { encoding: 'base64' }],
      }),
    })
    expect((await answer.json()).error).toBeUndefined()
    expect(node.balance(to)).toBe(10n ** 7n)
    // What it moved stays counted: the limit has nothing left for another lamport.
    expect(await limitOf(h, spendingLimitId)).toMatchObject({
      used: String(10n ** 7n + LAMPORTS_PER_SIGNATURE),
      remaining: '0',
    })
    const again = await send(h, { unsignedTransaction: transfer(1n), signWiths: [user] })
    expect(again.body.details).toMatchObject({ errorCode: 'SPENDING_LIMIT_EXCEEDED', spendingLimitId })
    await h.service.close()
  })

  it('takes the V1 single-signer shape and answers under the V1 result key', async () => {
    const h = await service()
    const user = await newAccount(h)
    airdrop(node, user, 10n ** 9n)
    const { address: to } = await generateKeyPairSigner()
    const reply = await send(
      h,
      {
        unsignedTransaction: unsigned(user, [
          getTransferSolInstruction({
            source: createNoopSigner(user as Address),
            destination: to,
            amount: 10n ** 7n,
          }),
        ]),
        signWith: user,
      },
      { type: 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION' },
    )
    expect(reply.status).toBe(200)
    const { sendTransactionStatusId } = reply.body.activity.result.solSendTransactionResult
    expect(await waitForSend(h, sendTransactionStatusId)).toMatchObject({ txStatus: 'INCLUDED' })
    await h.service.close()
  })

  it('a transaction whose blockhash its node does not know stays PENDING while that blockhash may be newer than the node has seen, then ends FAILED as expired', async () => {
    const h = await service()
    const user = await newAccount(h)
    airdrop(node, user, 10n ** 9n)
    const { address: to } = await generateKeyPairSigner()
    const unsignedTransaction = unsigned(user, [
      getTransferSolInstruction({
        source: createNoopSigner(user as Address),
        destination: to,
        amount: 10n ** 7n,
      }),
    ])
    node.svm.expireBlockhash()
    const calls = node.calls.length
    const reply = await send(h, { unsignedTransaction, signWiths: [user] })
    const { sendTransactionStatusId } = resultOf('sol_send_transaction', reply)
    await refusedBlockhash(h, sendTransactionStatusId, calls)
    await pastDoubt(h, sendTransactionStatusId)
    const status = await waitForSend(h, sendTransactionStatusId)
    expect(status).toMatchObject({ txStatus: 'FAILED', txError: expect.stringMatching(/expired/) })
    expect(node.balance(to)).toBe(0n)
    await h.service.close()
  })

  it('a transaction the chain refuses ends FAILED, with the reason', async () => {
    const h = await service()
    const user = await newAccount(h)
    airdrop(node, user, 10n ** 9n)
    const [source, destination] = await tokenAccounts([user, user], [1n, 0n])
    const reply = await send(h, {
      unsignedTransaction: unsigned(user, [
        getTransferInstruction({
          source: source!,
          destination: destination!,
          authority: createNoopSigner(user as Address),
          amount: 5n,
        }),
      ]),
      signWiths: [user],
    })
    const status = await waitForSend(h, resultOf('sol_send_transaction', reply).sendTransactionStatusId)
    expect(status).toMatchObject({ txStatus: 'FAILED', txError: expect.stringMatching(/refused/) })
    await h.service.close()
  })
})

describe('sol_send_transaction refuses bad input before signing anything', () => {
  it('names the field of each mistake with a 4xx', async () => {
    const h = await service()
    const user = await newAccount(h)
    const other = await newAccount(h)
    const { address: to } = await generateKeyPairSigner()
    const transfer = (from: string) =>
      getTransferSolInstruction({ source: createNoopSigner(from as Address), destination: to, amount: 1n })
    const cases: [Json, string, RegExp][] = [
      [
        // `other` must sign its transfer too
        { unsignedTransaction: unsigned(user, [transfer(user), transfer(other)]), signWiths: [user] },
        'parameters.signWiths',
        new RegExp(`needs a signature of ${other}`),
      ],
      [
        {
          unsignedTransaction: unsigned(user, [transfer(user)]),
          signWiths: [user],
          caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
        },
        'parameters.caip2',
        /no JSON-RPC node is configured for solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1/,
      ],
      [
        { unsignedTransaction: unsigned(user, [transfer(user)]), signWiths: [user], caip2: 'eip155:1' },
        'parameters.caip2',
        /Solana CAIP-2/,
      ],
      [
        { unsignedTransaction: 'abcd', signWiths: [user] },
        'parameters.unsignedTransaction',
        /not a Solana wire transaction/,
      ],
      [
        { unsignedTransaction: unsigned(user, [transfer(user)]), signWiths: [user, other] },
        'parameters.signWiths[1]',
        new RegExp(`${other} is not a required signer`),
      ],
      [
        {
          unsignedTransaction: unsigned(user, [transfer(user)]),
          signWiths: [user],
          recentBlockhash: 'not-a-hash',
        },
        'parameters.recentBlockhash',
        /blockhash/,
      ],
    ]
    const calls = node.calls.length
    for (const [parameters, field, message] of cases) {
      const reply = await send(h, parameters)
      expect(reply.status, JSON.stringify(reply.body)).toBeGreaterThanOrEqual(400)
      expect(reply.status).toBeLessThan(500)
      expect(reply.body.details).toMatchObject({ field })
      expect(reply.body.message).toMatch(message)
    }
    expect(await sends(h)).toBe(0)
    expect(node.calls.slice(calls)).not.toContain('sendTransaction')
    await h.service.close()
  })

  it('refuses a sponsored transaction whose instruction spends from the sponsor', async () => {
    const h = await service()
    const user = await newAccount(h)
    const sponsor = solanaSponsor(h)
    const { address: to } = await generateKeyPairSigner()
    const before = node.balance(sponsor)
    const drain = getTransferSolInstruction({
      source: createNoopSigner(sponsor as Address),
      destination: to,
      amount: 10n ** 8n,
    })
    for (const feePayer of [sponsor, user]) {
      const reply = await send(h, {
        unsignedTransaction: unsigned(feePayer, [drain]),
        signWiths: [user],
        sponsor: true,
      })
      expect(reply.status).toBe(400)
      expect(reply.body.details).toMatchObject({ field: 'parameters.unsignedTransaction' })
      expect(reply.body.message).toMatch(/names the sponsor/)
    }
    expect(await sends(h)).toBe(0)
    expect(node.balance(sponsor)).toBe(before)
    await h.service.close()
  })

  it('simulates a sponsored transaction first: one that would fail is refused with its logs, the fee payer pays nothing', async () => {
    const h = await service()
    const user = await newAccount(h)
    const sponsor = solanaSponsor(h)
    const [source, destination] = await tokenAccounts([user, user], [1n, 0n])
    const before = node.balance(sponsor)
    const calls = node.calls.length
    const reply = await send(h, {
      unsignedTransaction: unsigned(user, [
        getTransferInstruction({
          source: source!,
          destination: destination!,
          authority: createNoopSigner(user as Address),
          amount: 5n,
        }),
      ]),
      signWiths: [user],
      sponsor: true,
    })
    expect(reply.status).toBe(412)
    expect(reply.body.details).toMatchObject({
      errorCode: 'TRANSACTION_REVERTED',
      field: 'parameters.unsignedTransaction',
      error: {
        solana: {
          source: 'simulation',
          logs: expect.arrayContaining([expect.stringMatching(/insufficient funds/i)]),
        },
      },
    })
    expect(node.calls.slice(calls)).toContain('simulateTransaction')
    expect(node.calls.slice(calls)).not.toContain('sendTransaction')
    expect(await sends(h)).toBe(0)
    expect(node.balance(sponsor)).toBe(before)
    expect(tokenBalance(destination!)).toBe(0n)
    await h.service.close()
  })

  it("shows the simulation's logs without the provider's key of the node's URL, which a log line quoted", async () => {
    const KEY = 'k3yInPath-5a4b3c2d1e'
    // A provider at `<node>/v2/<KEY>` whose simulation answers quote the key and the path.
    const h = await service(
      {},
      async (_, init) => {
        const answer = await fetch(node.url, init)
        if (!String(init?.body).includes('"simulateTransaction"')) return answer
        const body = (await answer.json()) as { result: { value: { logs: string[] } } }
        body.result.value.logs.push(`gateway: billed to key ${KEY} (POST /v2/${KEY})`)
        return new Response(JSON.stringify(body))
      },
      `${node.url}/v2/${KEY}`,
    )
    const user = await newAccount(h)
    const [source, destination] = await tokenAccounts([user, user], [1n, 0n])
    const transfer = getTransferInstruction({
      source: source!,
      destination: destination!,
      authority: createNoopSigner(user as Address),
      amount: 5n,
    })
    const reply = await send(h, {
      unsignedTransaction: unsigned(user, [transfer]),
      signWiths: [user],
      sponsor: true,
    })
    expect(reply.status).toBe(412)
    expect(reply.body.details.error.solana.logs).toContain(
      'gateway: billed to key <redacted> (POST <redacted>)',
    )
    expect(JSON.stringify(reply.body)).not.toContain(KEY)
    await h.service.close()
  })

  it('counts sponsored fees against the lamport caps, before signing', async () => {
    const h = await service({ perUserPerDayLamports: Number(3n * LAMPORTS_PER_SIGNATURE) })
    const transfer = await sponsoredTokenTransfers(h)
    expect((await transfer()).status).toBe(200)
    const refused = await transfer()
    expect(refused).toMatchObject({ status: 429, body: { details: { errorCode: 'GAS_CAP_EXCEEDED' } } })
    expect(refused.body.message).toMatch(/lamports/)
    expect(await sends(h)).toBe(1)
    await h.service.close()
  })
})

describe("a sponsored Solana transaction's priority fee", () => {
  const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111' as Address
  const budget = (kind: number, value: bigint, bytes: number): Instruction => {
    const data = new Uint8Array(9)
    data[0] = kind
    new DataView(data.buffer).setBigUint64(1, value, true)
    return { programAddress: COMPUTE_BUDGET, data: data.subarray(0, 1 + bytes) }
  }
  const unitLimit = (units: number) => budget(2, BigInt(units), 4)
  const unitPrice = (microLamports: bigint) => budget(3, microLamports, 8)

  it("a price above the operator's ceiling, or a Compute Budget instruction it cannot price, is refused before signing; under it, the caps count the priority fee the sponsor pays", async () => {
    // 2 signatures and 100,000 compute units at 1 lamport each: 110,000 lamports a send.
    const perSend = 2n * LAMPORTS_PER_SIGNATURE + 100_000n
    const h = await service({ perUserPerDayLamports: Number(2n * perSend - 1n) })
    const sponsor = solanaSponsor(h)
    const transfer = await sponsoredTokenTransfers(h)
    const before = node.balance(sponsor)
    const calls = node.calls.length
    // Most of the sponsor's 1 SOL in one send's priority fee, had the price been taken.
    const drain = await transfer(unitLimit(1_400_000), unitPrice(600_000_000n))
    expect(drain.status, JSON.stringify(drain.body)).toBe(400)
    expect(drain.body.details).toMatchObject({ field: 'parameters.unsignedTransaction' })
    expect(drain.body.message).toMatch(/at most 1000000 micro-lamports per compute unit.*offers 600000000/)
    const unknown = await transfer(budget(9, 1n, 8))
    expect(unknown.status).toBe(400)
    expect(unknown.body.message).toMatch(
      /instruction 0 .* Compute Budget instruction the service cannot price/,
    )
    expect(await sends(h)).toBe(0)
    expect(node.calls.slice(calls)).not.toContain('sendTransaction')

    const { sendTransactionStatusId } = resultOf(
      'sol_send_transaction',
      await transfer(unitLimit(100_000), unitPrice(1_000_000n)),
    )
    expect(await waitForSend(h, sendTransactionStatusId)).toMatchObject({ txStatus: 'INCLUDED' })
    const counted = (await h.service.store.all('gasUsage')).map((row) => BigInt(row.gas))
    expect(counted).toEqual([perSend])
    expect(before - node.balance(sponsor)).toBe(perSend)
    // The same again passes the daily cap by one lamport: refused, though the node's own fee
    // answer (the dev node's leaves the priority fee out) would have let it through.
    const refused = await transfer(unitLimit(100_000), unitPrice(1_000_000n))
    expect(refused).toMatchObject({ status: 429, body: { details: { errorCode: 'GAS_CAP_EXCEEDED' } } })
    expect(await sends(h)).toBe(1)
    await h.service.close()
  })
})

describe('sol_send_transaction under an SPL spending limit', () => {
  it('counts a real token’s transfers exactly: a send expired on its way gives its spend back, one whose blockhash the node never knew keeps it, the limit is sent, one unit more is refused and never broadcast', async () => {
    // The node's blockhash expires as the next broadcast reaches it (after the send was signed on it).
    let expireOnBroadcast = false
    const h = await service({}, async (input, init) => {
      if (expireOnBroadcast && String(init?.body).includes('"sendTransaction"')) {
        expireOnBroadcast = false
        node.svm.expireBlockhash()
      }
      return fetch(input, init)
    })
    const { user, source, destination, spendingLimitId } = await underSplLimit(h)
    const transfer = (amount: bigint) =>
      unsigned(user, [
        getTransferCheckedInstruction({
          source: source!,
          mint: MINT,
          destination: destination!,
          authority: createNoopSigner(user as Address),
          amount,
          decimals: 6,
        }),
      ])
    const sent = async (unsignedTransaction: string, sponsor = false) => {
      const reply = await send(h, { unsignedTransaction, signWiths: [user], sponsor })
      return waitForSend(h, resultOf('sol_send_transaction', reply).sendTransactionStatusId)
    }
    const expires = async (unsignedTransaction: string) => {
      const before = node.calls.length
      const { sendTransactionStatusId } = resultOf(
        'sol_send_transaction',
        await send(h, { unsignedTransaction, signWiths: [user] }),
      )
      await refusedBlockhash(h, sendTransactionStatusId, before)
      return sendTransactionStatusId
    }
    // Signed on a blockhash the node knew, which expired before the broadcast reached it: reserved
    // when signed, still counted while the node may not have seen its blockhash yet, and given back
    // once the send ends FAILED as expired, never having reached the chain.
    expireOnBroadcast = true
    const late = await expires(transfer(70n))
    expect(await limitOf(h, spendingLimitId)).toMatchObject({ used: '70', remaining: '30' })
    await pastDoubt(h, late)
    expect(await waitForSend(h, late)).toMatchObject({
      txStatus: 'FAILED',
      txError: expect.stringMatching(/expired/),
    })
    expect(await limitOf(h, spendingLimitId)).toMatchObject({ used: '0', remaining: '100' })
    // Signed on a blockhash the node never knew (another cluster's, where its signer, who holds the
    // message and the signature the status answers, could land it): it stays counted once expired.
    const elsewhere = transfer(20n)
    node.svm.expireBlockhash()
    const unknown = await expires(elsewhere)
    await pastDoubt(h, unknown)
    expect(await waitForSend(h, unknown)).toMatchObject({
      txStatus: 'FAILED',
      txError: expect.stringMatching(/expired/),
    })
    expect(await limitOf(h, spendingLimitId)).toMatchObject({ used: '20', remaining: '80' })
    // So 80 is left: 40 paid by the user, 40 by the sponsor.
    expect(await sent(transfer(40n))).toMatchObject({ txStatus: 'INCLUDED' })
    expect(await sent(transfer(40n), true)).toMatchObject({ txStatus: 'INCLUDED' })
    expect(tokenBalance(destination!)).toBe(80n)
    const calls = node.calls.length
    const over = await send(h, { unsignedTransaction: transfer(1n), signWiths: [user], sponsor: true })
    expect(over.status).toBe(429)
    expect(over.body.details).toMatchObject({
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
      spendingLimitId,
      used: '100',
      remaining: '0',
      requested: '1',
    })
    expect(node.calls.slice(calls)).not.toContain('sendTransaction')
    expect(await sends(h)).toBe(4)
    expect(tokenBalance(source!)).toBe(920n)
    await h.service.close()
  })
})

describe('sol_send_transaction of a durable-nonce transaction', () => {
  it('refused for its nonce, keeps what it reserved: its nonce account may hold that nonce later', async () => {
    const h = await service()
    const { user, source, destination, spendingLimitId } = await underSplLimit(h)
    const [nonce, nonceAccount] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()])
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(user as Address, m),
      (m) =>
        setTransactionMessageLifetimeUsingDurableNonce(
          {
            // A nonce its account does not hold (yet): the node answers that the blockhash is not found.
            nonce: nonce.address as never,
            nonceAccountAddress: nonceAccount.address,
            nonceAuthorityAddress: user as Address,
          },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          [
            getTransferCheckedInstruction({
              source: source!,
              mint: MINT,
              destination: destination!,
              authority: createNoopSigner(user as Address),
              amount: 70n,
              decimals: 6,
            }),
          ],
          m,
        ),
    )
    const unsignedTransaction = Buffer.from(
      getTransactionEncoder().encode(compileTransaction(message)),
    ).toString('hex')
    const reply = await send(h, { unsignedTransaction, signWiths: [user] })
    const status = await waitForSend(h, resultOf('sol_send_transaction', reply).sendTransactionStatusId)
    expect(status).toMatchObject({ txStatus: 'FAILED', txError: expect.stringMatching(/BlockhashNotFound/) })
    expect(await limitOf(h, spendingLimitId)).toMatchObject({
      used: '70',
      remaining: '30',
    })
    await h.service.close()
  })
})

describe('sol_send_transaction and policies', () => {
  it('is judged on solana.tx like sign_transaction: a DENY on a transfer recipient refuses it', async () => {
    const h = await service()
    const key = testKey()
    const sub = await h.createSubOrganization({
      keys: [key],
      wallet: { walletName: 'Main', accounts: [SOLANA_ACCOUNT] },
    })
    const as = { organizationId: sub.organizationId, as: key }
    const user = sub.addresses![0]!
    airdrop(node, user, 10n ** 9n)
    const backend = testKey()
    const { userIds } = resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'backend',
              apiKeys: [backend.apiKey('backend')],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        as,
      ),
    )
    const { address: blocked } = await generateKeyPairSigner()
    const { address: fine } = await generateKeyPairSigner()
    const policy = (params: Json) => h.submit('create_policy', { notes: '', ...params }, as)
    expect(
      (
        await policy({
          policyName: 'back end sends',
          effect: 'EFFECT_ALLOW',
          condition: "activity.resource == 'WALLET' && activity.action == 'SEND'",
          consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await policy({
          policyName: 'never to blocked',
          effect: 'EFFECT_DENY',
          condition: `solana.tx.transfers.any(t, t.to == '${blocked}')`,
        })
      ).status,
    ).toBe(200)
    const asBackend = { organizationId: sub.organizationId, as: backend }
    const to = (destination: Address) =>
      send(
        h,
        {
          unsignedTransaction: unsigned(user, [
            getTransferSolInstruction({
              source: createNoopSigner(user as Address),
              destination,
              amount: 10n ** 7n,
            }),
          ]),
          signWiths: [user],
        },
        asBackend,
      )
    expect(await to(blocked)).toMatchObject({
      status: 403,
      body: { details: { errorCode: 'PERMISSION_DENIED', outcome: 'OUTCOME_DENY_EXPLICIT' } },
    })
    expect(await sends(h)).toBe(0)
    const allowed = resultOf('sol_send_transaction', await to(fine)).sendTransactionStatusId
    expect(
      await waitForSend(h, allowed, { organizationId: sub.organizationId, as: { as: backend } as never }),
    ).toMatchObject({ txStatus: 'INCLUDED' })
    expect(node.balance(fine)).toBe(10n ** 7n)
    await h.service.close()
  })
})
