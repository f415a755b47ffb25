/**
 * The EIP-1193 provider read a transaction's `value`, `nonce`, `gas` and fee fields only as hex
 * strings: a JSON number (which MetaMask takes, as this provider takes a numeric `chainId`) was
 * dropped without a word and filled in from the node. `eth_signTransaction({ value: 1000 })` signed
 * value 0, `eth_sendTransaction` sent 0 wei, and `{ nonce: 5 }` (a replacement or a cancel of a
 * stuck transaction) was signed at the next nonce, so both could be mined; `gasLimit` was ignored.
 * Each quantity is now read as 0x-hex, a safe non-negative integer or a bigint; one present that is
 * none of these is refused (-32602) naming it, never dropped. A string without 0x ("10") is refused
 * too: it was read as decimal (10) where MetaMask (normalizeTransactionParams adds the 0x) reads it
 * as hex (16), and JSON-RPC knows only 0x-hex quantities, so the same request signed another value,
 * nonce or gas here than there.
 */
import { type Address, type Chain, type Hex, numberToHex, parseTransaction } from 'viem'
import { anvil } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../scripts/evmNode.mjs'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { createClientFixture } from '../core/test/fixtures.ts'
import { createLatchkeyEip1193Provider } from './index.ts'

let node: EvmNode
let chain: Chain
let provider: ReturnType<typeof createLatchkeyEip1193Provider>
let address: Address
beforeAll(async () => {
  node = await startEvmNode()
  chain = { ...anvil, rpcUrls: { default: { http: [node.url] } } }
  const fx = await createClientFixture()
  await fx.signUpDirect()
  const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
  address = addresses[0] as Address
  await node.rpc('anvil_setBalance', [address, numberToHex(10n ** 19n)])
  provider = createLatchkeyEip1193Provider(fx.client, { chains: [chain] })
})
afterAll(async () => {
  provider?.destroy()
  await node?.close()
})

const to = '0x000000000000000000000000000000000000bEEF'

/** The signed transaction's fields, or the error's code and message. */
const signed = (tx: Record<string, unknown>) =>
  provider.request({ method: 'eth_signTransaction', params: [{ from: address, to, ...tx }] }).then(
    (raw) => parseTransaction(raw as Hex),
    (error: { code?: number; details?: string }) => ({ code: error.code, details: error.details }),
  )

describe('eth_signTransaction / eth_sendTransaction quantities', () => {
  it('signs a numeric value and nonce as given, not 0 and the next nonce', async () => {
    expect(await signed({ value: 1000, nonce: 5 })).toMatchObject({ value: 1000n, nonce: 5 })
  })

  it('reads numbers, bigints and 0x-hex alike, fee fields too', async () => {
    const fees = { maxFeePerGas: '0xb2d05e00', maxPriorityFeePerGas: 2_000_000_000 }
    expect(await signed({ value: 1000n, nonce: 7n, gas: 30_000, ...fees })).toMatchObject({
      value: 1000n,
      nonce: 7,
      gas: 30_000n,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 2_000_000_000n,
    })
    expect(
      await signed({ value: '0x3e8', nonce: '0x7', gasPrice: 1_000_000_000, type: '0x0' }),
    ).toMatchObject({
      value: 1000n,
      nonce: 7,
      gasPrice: 1_000_000_000n,
    })
  })

  it('refuses a quantity string without 0x (MetaMask reads "10" as 0x10), neither decimal nor hex', async () => {
    for (const [key, text] of [
      ['value', '10'],
      ['nonce', '10'],
      ['gas', '30000'],
      ['gasLimit', '30000'],
      ['gasPrice', '1000000000'],
      ['maxFeePerGas', '3000000000'],
      ['maxPriorityFeePerGas', '2000000000'],
      ['value', 'ff'],
      ['value', '0'],
    ] as const)
      expect({ key, text, outcome: await signed({ [key]: text }) }).toMatchObject({
        key,
        outcome: { code: -32602, details: expect.stringContaining(`transaction's ${key} must be`) },
      })
  })

  it('still reads a chainId as before: a decimal string is the decimal chain id', async () => {
    expect(await signed({ value: 1, chainId: String(chain.id) })).toMatchObject({ chainId: chain.id })
    expect(await signed({ value: 1, chainId: numberToHex(chain.id) })).toMatchObject({ chainId: chain.id })
  })

  it('takes gasLimit for gas, and refuses the two when they differ', async () => {
    expect(await signed({ value: 1, gasLimit: 30_000 })).toMatchObject({ gas: 30_000n })
    expect(await signed({ value: 1, gas: '0x7530', gasLimit: 30_000 })).toMatchObject({ gas: 30_000n })
    expect(await signed({ value: 1, gas: 30_000, gasLimit: 40_000 })).toMatchObject({
      code: -32602,
      details: expect.stringMatching(/gas .*gasLimit/),
    })
  })

  it('refuses a quantity it cannot read, naming it, rather than dropping it', async () => {
    for (const [key, bad] of [
      ['value', 1.5],
      ['value', -1],
      ['value', 1e20],
      ['value', '1e3'],
      ['value', ' 1000'],
      ['value', '-0x1'],
      ['value', true],
      ['nonce', 2 ** 53],
      ['nonce', '0xzz'],
      ['gas', {}],
      ['gasLimit', '0x'],
      ['maxFeePerGas', 1.1],
      ['gasPrice', -5n],
    ] as const)
      expect({ key, bad, outcome: await signed({ [key]: bad }) }).toMatchObject({
        key,
        outcome: { code: -32602, details: expect.stringContaining(`transaction's ${key} must be`) },
      })
    // Absent (undefined or null) is left for the node to fill in, as before.
    const filled = await signed({ value: null, nonce: null, gas: undefined })
    expect(filled).toMatchObject({ nonce: 0, gas: 21_000n })
    expect(filled).not.toHaveProperty('value')
  })

  it('eth_sendTransaction with a numeric value sends that value', async () => {
    const before = BigInt((await node.rpc('eth_getBalance', [to, 'latest'])) as string)
    const hash = (await provider.request({
      method: 'eth_sendTransaction',
      params: [{ from: address, to, value: 1000 }],
    })) as Hex
    await node.waitForReceipt(hash)
    const after = BigInt((await node.rpc('eth_getBalance', [to, 'latest'])) as string)
    expect(after - before).toBe(1000n)
  })
})
