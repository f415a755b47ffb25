/**
 * `toLatchkeyAccount(...).signTypedData` (and so the provider's `eth_signTypedData_v4`, wagmi's
 * `signTypedData`) sent the app's typed data as it was, and the service's EIP-712 encoder refuses a
 * key its type does not declare ("unexpected field"), while viem (`hashTypedData`, its own
 * accounts) and MetaMask's eth-sig-util encode only the declared fields: a message carrying one
 * property more than its type (an order an app got from its API), a domain with `salt: null`, an
 * explicit `EIP712Domain` declaring fewer fields than the domain has failed with Latchkey only.
 * The account now sends the service what is signed, the message and domain projected onto their
 * types (the service stays strict: its policies see exactly that), and the signature verifies
 * against the app's own input.
 */
import { type Address, type Chain, type Hex, verifyTypedData } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { anvil } from 'viem/chains'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { type ClientFixture, createClientFixture } from '../core/test/fixtures.ts'
import { createLatchkeyEip1193Provider, LatchkeyViemError, toLatchkeyAccount } from './index.ts'

const local = privateKeyToAccount(`0x${'11'.repeat(32)}`)
let fx: ClientFixture
let address: Address
/** The typed data of each EIP-712 payload the service was asked to sign. */
let sent: Record<string, unknown>[]
beforeAll(async () => {
  fx = await createClientFixture()
  await fx.signUpDirect()
  const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
  address = addresses[0] as Address
  const fetch = fx.client.config.fetch
  fx.client.config.fetch = (input, init) => {
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined
    if (body?.parameters?.encoding === 'PAYLOAD_ENCODING_EIP712')
      sent.push(JSON.parse(body.parameters.payloads[0]))
    return fetch(input, init)
  }
})
beforeEach(() => {
  sent = []
})

const P = [{ name: 'n', type: 'uint256' }] as const
const cases = {
  'a message with a property its type does not declare': {
    domain: { name: 'Shop', chainId: 31337 },
    types: { P },
    primaryType: 'P',
    message: { n: 1n, note: 'from the API' },
  },
  'a domain with salt and verifyingContract null': {
    domain: { name: 'Shop', chainId: 31337, salt: null, verifyingContract: null },
    types: { P },
    primaryType: 'P',
    message: { n: 1n },
  },
  'an explicit EIP712Domain type declaring fewer fields than the domain has': {
    domain: { name: 'Shop', chainId: 31337 },
    types: { EIP712Domain: [{ name: 'name', type: 'string' }], P },
    primaryType: 'P',
    message: { n: 1n },
  },
  'undeclared properties inside nested structs and arrays of structs': {
    domain: { name: 'Mail', version: '1', chainId: 31337, extra: 'x' },
    types: {
      Person: [
        { name: 'name', type: 'string' },
        { name: 'wallets', type: 'address[]' },
      ],
      Mail: [
        { name: 'from', type: 'Person' },
        { name: 'to', type: 'Person[]' },
        { name: 'grid', type: 'Person[1][]' },
        { name: 'contents', type: 'string' },
      ],
    },
    primaryType: 'Mail',
    message: {
      from: { name: 'Cow', wallets: ['0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826'], avatar: 'cow.png' },
      to: [{ name: 'Bob', wallets: [], email: 'bob@example.com' }],
      grid: [[{ name: 'Eve', wallets: [], id: 7 }]],
      contents: 'Hello, Bob!',
      sentAt: 1700000000,
    },
  },
} as const

describe('viem account signTypedData: what viem and eth-sig-util encode, Latchkey signs', () => {
  for (const [name, typed] of Object.entries(cases))
    it(name, async () => {
      // viem's own signer signs it, and viem verifies that signature.
      const localSignature = await local.signTypedData(typed as never)
      expect(
        await verifyTypedData({ ...typed, address: local.address, signature: localSignature } as never),
      ).toBe(true)
      const account = toLatchkeyAccount(fx.client, { address })
      const signature = await account.signTypedData(typed as never)
      expect(await verifyTypedData({ ...typed, address, signature } as never)).toBe(true)
      // The service (and its policies) got only what is signed.
      const text = JSON.stringify(sent)
      for (const undeclared of [
        'note',
        'salt',
        'verifyingContract',
        'extra',
        'avatar',
        'email',
        '"id"',
        'sentAt',
      ])
        expect(text).not.toContain(undeclared)
    })

  it('what the service is sent: declared fields only, nested, values unchanged', async () => {
    const typed = cases['undeclared properties inside nested structs and arrays of structs']
    await toLatchkeyAccount(fx.client, { address }).signTypedData(typed as never)
    expect(sent).toEqual([
      {
        types: {
          ...typed.types,
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
          ],
        },
        primaryType: 'Mail',
        domain: { name: 'Mail', version: '1', chainId: 31337 },
        message: {
          from: { name: 'Cow', wallets: ['0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826'] },
          to: [{ name: 'Bob', wallets: [] }],
          grid: [[{ name: 'Eve', wallets: [] }]],
          contents: 'Hello, Bob!',
        },
      },
    ])
  })

  it('a declared field the message lacks is still refused by the service, not filled in', async () => {
    const error = await toLatchkeyAccount(fx.client, { address })
      .signTypedData({ domain: { name: 'Shop' }, types: { P }, primaryType: 'P', message: {} } as never)
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'FIELD_INVALID' })
  })

  it('a type named after an Object.prototype member, or a null domain, is passed on for the service to judge', async () => {
    const account = toLatchkeyAccount(fx.client, { address })
    // The projection looks up only the types given: `toString` is no struct of this typed data.
    const inherited = await account
      .signTypedData({
        domain: { name: 'Shop' },
        types: { P: [{ name: 'n', type: 'toString' }] },
        primaryType: 'P',
        message: { n: { a: 1 } },
      } as never)
      .catch((e: unknown) => e)
    expect(inherited).toBeInstanceOf(LatchkeyViemError)
    expect(sent).toHaveLength(1)
    const nullDomain = await account
      .signTypedData({ domain: null, types: { P }, primaryType: 'P', message: { n: 1 } } as never)
      .catch((e: unknown) => e)
    expect(nullDomain).toMatchObject({ code: 'FIELD_INVALID' })
  })

  it('eth_signTypedData_v4 of a dapp whose message carries an undeclared property (MetaMask signs it)', async () => {
    const chain: Chain = { ...anvil, rpcUrls: { default: { http: ['http://127.0.0.1:9/'] } } }
    const provider = createLatchkeyEip1193Provider(fx.client, { chains: [chain] })
    const typed = {
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'chainId', type: 'uint256' },
        ],
        P,
      },
      primaryType: 'P',
      domain: {
        name: 'Shop',
        chainId: 31337,
        verifyingContract: '0x000000000000000000000000000000000000c0de',
      },
      message: { n: '1', note: 'x' },
    }
    const signature = (await provider.request({
      method: 'eth_signTypedData_v4',
      params: [address, JSON.stringify(typed)],
    })) as Hex
    expect(await verifyTypedData({ ...typed, address, signature } as never)).toBe(true)
    provider.destroy()
  })
})
