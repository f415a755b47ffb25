import { keccak_256 } from '@noble/hashes/sha3.js'
import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../../../../scripts/evmNode.mjs'
import { createHarness, ETHEREUM_ACCOUNT, resultOf } from '../../testing/harness.ts'

// A real local EVM node (anvil, the one `npm start` runs, on a free port).
let node: EvmNode
let rpcUrl: string

const rpc = (method: string, params: unknown[]) => node.rpc(method, params)

beforeAll(async () => {
  node = await startEvmNode()
  rpcUrl = node.url
})

afterAll(async () => {
  await node?.close()
})

/** A transfer from `from` signed through sign_raw_payloads (the service holds the key). */
async function signTransfer(
  h: Awaited<ReturnType<typeof createHarness>>,
  from: string,
  nonce: bigint,
  chainId = 31337n,
  value = 10n ** 15n,
): Promise<string> {
  const unsigned = Transaction.prepare({
    to: '0x000000000000000000000000000000000000dEaD',
    value,
    nonce,
    chainId,
    maxFeePerGas: 2n * 10n ** 10n,
    maxPriorityFeePerGas: 10n ** 9n,
  })
  const digest = keccak_256(unsigned.toBytes({ includeSignature: false }))
  h.clock.advance(1)
  const { signatures } = resultOf(
    'sign_raw_payloads',
    await h.submit('sign_raw_payloads', {
      signWith: from,
      payloads: [`0x${Buffer.from(digest).toString('hex')}`],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    }),
  )
  const { r, s, v } = signatures[0]
  const signed = new Transaction(
    unsigned.type,
    { ...unsigned.raw, r: BigInt(`0x${r}`), s: BigInt(`0x${s}`), yParity: Number.parseInt(v, 16) } as never,
    { strict: false },
  )
  expect(signed.sender.toLowerCase()).toBe(from.toLowerCase())
  return signed.toHex()
}

describe('eth_send_raw_transaction', () => {
  it('broadcasts a service-signed transaction to the configured node, which mines it', async () => {
    const h = await createHarness({ rpc: { 'eip155:31337': rpcUrl } })
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Gas', accounts: [ETHEREUM_ACCOUNT] }),
    )
    await rpc('anvil_setBalance', [addresses[0], `0x${(10n ** 18n).toString(16)}`])
    const signedTransaction = await signTransfer(h, addresses[0], 0n)
    const reply = await h.submit('eth_send_raw_transaction', { signedTransaction, caip2: 'eip155:31337' })
    const { transactionHash } = resultOf('eth_send_raw_transaction', reply)
    expect(transactionHash).toBe(Transaction.fromHex(signedTransaction).hash)
    const receipt = (await node.waitForReceipt(transactionHash)) as {
      status: string
      from: string
    }
    expect(receipt).toMatchObject({ status: '0x1', from: addresses[0].toLowerCase() })

    // The node's refusal (an unfunded sender) is a 400 naming the transaction.
    const poor = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Poor', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const stale = await signTransfer(h, poor.addresses[0], 0n)
    const replayed = await h.submit('eth_send_raw_transaction', {
      signedTransaction: stale,
      caip2: 'eip155:31337',
    })
    expect(replayed).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'TRANSACTION_INVALID', field: 'parameters.signedTransaction' } },
    })
  })

  it('fails clearly without a node, for another chain, or for garbage', async () => {
    const h = await createHarness({ rpc: { 'eip155:31337': rpcUrl } })
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'G', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const signedTransaction = await signTransfer(h, addresses[0], 0n, 1n)
    const noNode = await h.submit('eth_send_raw_transaction', { signedTransaction, caip2: 'eip155:1' })
    expect(noNode).toEqual({
      status: 412,
      body: {
        code: 9,
        message: 'no JSON-RPC node is configured for eip155:1',
        details: { errorCode: 'RPC_NOT_CONFIGURED', field: 'parameters.caip2' },
      },
    })
    const wrongChain = await h.submit('eth_send_raw_transaction', {
      signedTransaction,
      caip2: 'eip155:31337',
    })
    expect(wrongChain).toMatchObject({ status: 400, body: { details: { errorCode: 'TRANSACTION_INVALID' } } })
    const garbage = await h.submit('eth_send_raw_transaction', {
      signedTransaction: '0x1234',
      caip2: 'eip155:31337',
    })
    expect(garbage).toMatchObject({
      status: 400,
      body: { details: { field: 'parameters.signedTransaction' } },
    })
    const badCaip = await h.submit('eth_send_raw_transaction', { signedTransaction, caip2: 'ethereum' })
    expect(badCaip).toMatchObject({ status: 400, body: { details: { field: 'parameters.caip2' } } })
    const down = await createHarness({ rpc: { 'eip155:1': 'http://127.0.0.1:9' } })
    const { addresses: a2 } = resultOf(
      'create_wallet',
      await down.submit('create_wallet', { walletName: 'G', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const tx2 = await signTransfer(down, a2[0], 0n, 1n)
    expect(
      await down.submit('eth_send_raw_transaction', { signedTransaction: tx2, caip2: 'eip155:1' }),
    ).toMatchObject({
      status: 503,
      body: { details: { errorCode: 'RPC_FAILED' } },
    })
  })
})
