/**
 * The EIP-1193 provider refuses a transaction or typed data naming another chain than the one it is
 * on (docs/evm.md; chainMismatch.test.ts), and its passkey rule and limits judge the transactions it
 * signs. `eth_sign` signed any 32-byte hash the page handed it (HASH_FUNCTION_NO_OP), so the same
 * page got the refused mainnet Permit, a mainnet transaction, and an EIP-7702 authorization for
 * every chain (chainId 0) by hashing them itself. It is refused now (4200, unsupported method, as
 * MetaMask has by default since 2023), and not sent on to the chain's RPC either: this chain's RPC
 * URL leads nowhere, so a forwarded call would fail with 4900 instead.
 */
import {
  type Address,
  type Chain,
  type Hex,
  hashTypedData,
  keccak256,
  numberToHex,
  recoverAddress,
  recoverTypedDataAddress,
  serializeTransaction,
} from 'viem'
import { anvil } from 'viem/chains'
import { hashAuthorization } from 'viem/utils'
import { describe, expect, it } from 'vitest'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { createClientFixture } from '../core/test/fixtures.ts'
import { permitTypedData } from '../test/permitTypedData.ts'
import { createLatchkeyEip1193Provider, toLatchkeyAccount } from './index.ts'

const chain: Chain = { ...anvil, rpcUrls: { default: { http: ['http://127.0.0.1:1'] } } }

async function setUp() {
  const fx = await createClientFixture()
  await fx.signUpDirect()
  const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
  const provider = createLatchkeyEip1193Provider(fx.client, { chains: [chain] })
  return { fx, provider, address: addresses[0] as Address }
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (error: { code?: number; message?: string }) => ({ error: error.code ?? error.message }),
  )

/** What the provider answers `eth_sign` of `hash`, and whether that is a valid signature of it. */
async function ethSign(
  provider: ReturnType<typeof createLatchkeyEip1193Provider>,
  address: Address,
  hash: Hex,
) {
  const result = await outcome(provider.request({ method: 'eth_sign', params: [address, hash] }))
  const valid =
    'value' in result && (await recoverAddress({ hash, signature: result.value as Hex })) === address
  return { error: 'error' in result ? result.error : undefined, valid }
}

describe('eth_sign, which would pass the chain checks of the EIP-1193 provider', () => {
  it('a mainnet Permit refused by eth_signTypedData_v4 is not signed through eth_sign of its digest', async () => {
    const { provider, address } = await setUp()
    const permit = permitTypedData(1)
    // As the kit promises: refused.
    expect(
      await outcome(
        provider.request({ method: 'eth_signTypedData_v4', params: [address, JSON.stringify(permit)] }),
      ),
    ).toEqual({ error: -32602 })
    // The same page, one call later.
    const digest = hashTypedData(permit as never)
    const result = await outcome(provider.request({ method: 'eth_sign', params: [address, digest] }))
    const valid =
      'value' in result &&
      (await recoverTypedDataAddress({ ...permit, signature: result.value as Hex } as never)) === address
    const error = 'error' in result ? result.error : undefined
    expect({ error, validMainnetPermit: valid }).toEqual({ error: 4200, validMainnetPermit: false })
  })

  it('a mainnet transaction refused by eth_signTransaction is not signed through eth_sign of its hash', async () => {
    const { provider, address } = await setUp()
    const tx = {
      chainId: 1,
      type: 'eip1559' as const,
      nonce: 0,
      to: '0x000000000000000000000000000000000000dEaD' as Address,
      value: 10n ** 18n,
      gas: 21000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 10n ** 9n,
    }
    expect(
      await outcome(
        provider.request({
          method: 'eth_signTransaction',
          params: [{ from: address, to: tx.to, value: numberToHex(tx.value), chainId: '0x1' }],
        }),
      ),
    ).toEqual({ error: -32602 })
    expect(await ethSign(provider, address, keccak256(serializeTransaction(tx)))).toEqual({
      error: 4200,
      valid: false,
    })
  })

  it('no EIP-7702 authorization for every chain (chainId 0) comes out of eth_sign', async () => {
    const { provider, address } = await setUp()
    const hash = hashAuthorization({
      chainId: 0,
      address: '0x000000000000000000000000000000000000bAd0',
      nonce: 0,
    })
    expect(await ethSign(provider, address, hash)).toEqual({ error: 4200, valid: false })
  })

  it('the refusal names the way an app that needs a raw hash signs it, and that way works', async () => {
    const { fx, provider, address } = await setUp()
    const hash = keccak256('0x1234')
    const refused = await provider.request({ method: 'eth_sign', params: [address, hash] }).catch((e) => e)
    expect(refused).toMatchObject({ code: 4200 })
    expect((refused as Error).message).toContain('toLatchkeyAccount(client, { address }).sign({ hash })')
    const account = toLatchkeyAccount(fx.client, { address })
    expect(await recoverAddress({ hash, signature: await account.sign!({ hash }) })).toBe(address)
  })
})
