import {
  type Address,
  BaseError,
  type Chain,
  concatHex,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  numberToHex,
  pad,
  recoverAddress,
  recoverTransactionAddress,
  serializeTransaction,
  verifyMessage,
  verifyTypedData,
} from 'viem'
import { anvil } from 'viem/chains'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../scripts/evmNode.mjs'
import { approveActivity } from '../core/actions/activities/approveActivity.ts'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { logout } from '../core/actions/auth/logout.ts'
import { getWalletAccounts } from '../core/actions/queries/getWalletAccounts.ts'
import { type ClientFixture, createClientFixture } from '../core/test/fixtures.ts'
import {
  createLatchkeyEip1193Provider,
  isLatchkeyConsensusNeededError,
  LatchkeyConsensusNeededError,
  LatchkeyViemError,
  toLatchkeyAccount,
} from './index.ts'

// A contract whose code stores the first calldata word in slot 0: CALLDATALOAD(0) SSTORE(0) STOP.
const RUNTIME = '0x60003560005500'
// Copies the 7-byte runtime (at offset 12) to memory and returns it.
const INITCODE = concatHex(['0x6007600c60003960076000f3', RUNTIME])
const WORD = pad('0x1a7c4e', { size: 32 })

let node: EvmNode
let chain: Chain
const rpc = (method: string, params: unknown[]) => node.rpc(method, params)

beforeAll(async () => {
  node = await startEvmNode()
  chain = { ...anvil, rpcUrls: { default: { http: [node.url] } } }
})
afterAll(async () => {
  await node?.close()
})

async function signedInWithFunds(fx: ClientFixture): Promise<Address> {
  await fx.signUpDirect()
  const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
  const address = addresses[0] as Address
  await rpc('anvil_setBalance', [address, numberToHex(10n ** 19n)])
  return address
}

describe('toLatchkeyAccount with a viem wallet client, the local service and anvil', () => {
  let fx: ClientFixture
  let address: Address
  beforeEach(async () => {
    fx = await createClientFixture()
    address = await signedInWithFunds(fx)
  })

  const clients = () => {
    const account = toLatchkeyAccount(fx.client, { address })
    const wallet = createWalletClient({ account, chain, transport: http(node.url), pollingInterval: 50 })
    const reader = createPublicClient({ chain, transport: http(node.url), pollingInterval: 50 })
    return { account, wallet, reader }
  }

  it('sends an EIP-1559 transfer that is mined, and a contract deployment and call', async () => {
    const { wallet, reader } = clients()
    const to = '0x000000000000000000000000000000000000dEaD'
    const hash = await wallet.sendTransaction({ to, value: 12345n })
    const receipt = await reader.waitForTransactionReceipt({ hash })
    expect(receipt).toMatchObject({ status: 'success', type: 'eip1559', from: address.toLowerCase() })
    expect(await reader.getBalance({ address: to })).toBe(12345n)

    const deployed = await reader.waitForTransactionReceipt({
      hash: await wallet.sendTransaction({ data: INITCODE }),
    })
    const contract = deployed.contractAddress as Address
    expect(await reader.getCode({ address: contract })).toBe(RUNTIME)
    const call = await reader.waitForTransactionReceipt({
      hash: await wallet.sendTransaction({ to: contract, data: WORD }),
    })
    expect(call.status).toBe('success')
    expect(await reader.getStorageAt({ address: contract, slot: '0x0' })).toBe(WORD)
  })

  it('signs an EIP-7702 authorization the node executes in a type-4 transaction', async () => {
    const { wallet, reader } = clients()
    const deployed = await reader.waitForTransactionReceipt({
      hash: await wallet.sendTransaction({ data: INITCODE }),
    })
    const contract = deployed.contractAddress as Address
    // The account delegates its own code to the contract and calls itself in the same transaction.
    const authorization = await wallet.signAuthorization({ contractAddress: contract, executor: 'self' })
    expect(authorization).toMatchObject({ address: contract, chainId: chain.id })
    const hash = await wallet.sendTransaction({ authorizationList: [authorization], to: address, data: WORD })
    const receipt = await reader.waitForTransactionReceipt({ hash })
    expect(receipt).toMatchObject({ status: 'success', type: 'eip7702' })
    expect(await reader.getCode({ address })).toBe(concatHex(['0xef0100', contract]))
    expect(await reader.getStorageAt({ address, slot: '0x0' })).toBe(WORD)
  })

  it('signs messages, hashes and EIP-712 typed data that viem verifies', async () => {
    const { account } = clients()
    const message = 'gm from latchkey'
    expect(await verifyMessage({ address, message, signature: await account.signMessage({ message }) })).toBe(
      true,
    )
    const raw = '0xdeadbeef'
    expect(
      await verifyMessage({
        address,
        message: { raw },
        signature: await account.signMessage({ message: { raw } }),
      }),
    ).toBe(true)
    const hash = pad('0x01', { size: 32 })
    expect(await recoverAddress({ hash, signature: (await account.sign?.({ hash })) as Hex })).toBe(address)

    const typed = {
      domain: { name: 'Mail', version: '1', chainId: 31337, verifyingContract: address },
      types: {
        Person: [
          { name: 'name', type: 'string' },
          { name: 'wallet', type: 'address' },
        ],
        Mail: [
          { name: 'from', type: 'Person' },
          { name: 'contents', type: 'string' },
          { name: 'amount', type: 'uint256' },
        ],
      },
      primaryType: 'Mail',
      message: { from: { name: 'Ann', wallet: address }, contents: 'hi', amount: 10n ** 30n },
    } as const
    const signature = await account.signTypedData(typed)
    expect(await verifyTypedData({ ...typed, address, signature })).toBe(true)
  })

  it('honours a custom serializer, and a legacy transaction signs through sign_transaction', async () => {
    const { account } = clients()
    const calls: unknown[] = []
    const serializer = ((tx: never, signature?: never) => {
      calls.push(signature)
      return serializeTransaction(tx, signature)
    }) as unknown as typeof serializeTransaction
    const tx = {
      type: 'legacy',
      chainId: 31337,
      nonce: 0,
      gasPrice: 10n ** 9n,
      gas: 21000n,
      value: 1n,
    } as const
    const signed = await account.signTransaction(tx, { serializer })
    expect(calls).toHaveLength(2)
    expect(calls[1]).toMatchObject({ r: expect.any(String), s: expect.any(String) })
    expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(address)
  })

  it('fails with viem BaseErrors: unknown account, and consensus needed carrying the activity id', async () => {
    const stranger = toLatchkeyAccount(fx.client, { address: '0x000000000000000000000000000000000000dEaD' })
    const error = await stranger.signMessage({ message: 'x' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BaseError)
    expect((error as BaseError).walk((e) => e instanceof LatchkeyViemError)).toMatchObject({
      code: 'WALLET_ACCOUNT_NOT_FOUND',
    })

    // Two root users, both needed: the wallet itself waits for the second one's approval.
    const quorum = await createClientFixture()
    const { sessions } = await quorum.signUpDirect({ users: 2, threshold: 2 })
    const waiting = (await createWallet(quorum.client, { walletName: 'Q', chains: ['ethereum'] }).catch(
      (e: unknown) => e,
    )) as { activity: { fingerprint: string } }
    await approveActivity(quorum.client, {
      fingerprint: waiting.activity.fingerprint,
      sessionId: sessions[1]?.id,
    })
    const { accounts } = await getWalletAccounts(quorum.client, { paginationOptions: { limit: '10' } })
    const addresses = accounts.map((a) => a.address)
    const account = toLatchkeyAccount(quorum.client, { address: addresses[0] as Address })
    const pending = await account.signMessage({ message: 'needs two' }).catch((e: unknown) => e)
    expect(isLatchkeyConsensusNeededError(pending)).toBe(true)
    expect(pending).toBeInstanceOf(LatchkeyConsensusNeededError)
    expect((pending as LatchkeyConsensusNeededError).activityId).toMatch(/\S/)
  })
})

describe('createLatchkeyEip1193Provider', () => {
  it('follows the session: accounts, signing methods, sending, chain switching and error codes', async () => {
    const fx = await createClientFixture()
    const provider = createLatchkeyEip1193Provider(fx.client, { chains: [chain] })
    const events: [string, unknown][] = []
    for (const name of ['accountsChanged', 'chainChanged', 'connect', 'disconnect'] as const)
      provider.on(name, ((value: unknown) => events.push([name, value])) as never)
    const code = (promise: Promise<unknown>) =>
      promise.then(
        () => 'resolved',
        (e: { code?: number }) => e.code,
      )

    // Signed out: no accounts, and asking for them is the user's refusal.
    expect(await provider.request({ method: 'eth_accounts' })).toEqual([])
    expect(await code(provider.request({ method: 'eth_requestAccounts' }))).toBe(4001)
    expect(await code(provider.request({ method: 'personal_sign', params: ['0x00', chain.id] }))).toBe(4001)

    const address = await signedInWithFunds(fx)
    expect(await provider.request({ method: 'eth_requestAccounts' })).toEqual([address])
    expect(await provider.request({ method: 'eth_accounts' })).toEqual([address])
    expect(await provider.request({ method: 'eth_chainId' })).toBe('0x7a69')

    const signature = (await provider.request({
      method: 'personal_sign',
      params: ['0x68656c6c6f', address],
    })) as Hex
    expect(await verifyMessage({ address, message: 'hello', signature })).toBe(true)
    // eth_sign signs any hash, past the chain checks: refused (ethSign.test.ts).
    expect(
      await code(provider.request({ method: 'eth_sign', params: [address, pad('0x02', { size: 32 })] })),
    ).toBe(4200)
    const typed = {
      types: {
        EIP712Domain: [{ name: 'name', type: 'string' }],
        Ping: [{ name: 'n', type: 'uint256' }],
      },
      primaryType: 'Ping',
      domain: { name: 'Pong' },
      message: { n: '7' },
    }
    const typedSignature = (await provider.request({
      method: 'eth_signTypedData_v4',
      params: [address, JSON.stringify(typed)],
    })) as Hex
    expect(
      await verifyTypedData({
        address,
        domain: typed.domain,
        types: { Ping: typed.types.Ping },
        primaryType: 'Ping',
        message: { n: 7n },
        signature: typedSignature,
      }),
    ).toBe(true)

    const to = '0x000000000000000000000000000000000000bEEF'
    const signedTx = (await provider.request({
      method: 'eth_signTransaction',
      params: [{ from: address, to, value: '0x5' }],
    })) as Hex
    expect(await recoverTransactionAddress({ serializedTransaction: signedTx as never })).toBe(address)
    const txHash = (await provider.request({
      method: 'eth_sendTransaction',
      params: [{ from: address, to, value: '0x7' }],
    })) as Hex
    expect(await node.waitForReceipt(txHash)).toMatchObject({ status: '0x1' })
    expect(await provider.request({ method: 'eth_getBalance', params: [to, 'latest'] })).toBe('0x7')

    // Another user's address: 4100; an unknown chain: 4902; wallet methods it lacks: 4200.
    expect(await code(provider.request({ method: 'personal_sign', params: ['0x00', to] }))).toBe(4100)
    expect(
      await code(provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x1' }] })),
    ).toBe(4902)
    expect(await code(provider.request({ method: 'wallet_addEthereumChain', params: [{}] }))).toBe(4200)
    expect(
      await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x7a69' }] }),
    ).toBeNull()

    // Signing out empties the accounts and disconnects.
    events.length = 0
    await logout(fx.client)
    expect(events.map(([name]) => name)).toEqual(['accountsChanged', 'disconnect'])
    expect(events[0]?.[1]).toEqual([])
    expect(events[1]?.[1]).toMatchObject({ code: 4900 })
    expect(await provider.request({ method: 'eth_accounts' })).toEqual([])
    provider.destroy()
  })

  it('deploys, and sends a type-4 transaction without `to` that calls its authorization signer', async () => {
    const fx = await createClientFixture()
    const provider = createLatchkeyEip1193Provider(fx.client, { chains: [chain] })
    const address = await signedInWithFunds(fx)
    const receipt = (hash: unknown) => node.waitForReceipt(hash as Hex)
    const deployed = await receipt(
      await provider.request({ method: 'eth_sendTransaction', params: [{ from: address, data: INITCODE }] }),
    )
    const contract = (deployed as { contractAddress: Address }).contractAddress
    expect(await provider.request({ method: 'eth_getCode', params: [contract, 'latest'] })).toBe(RUNTIME)

    const wallet = createWalletClient({
      account: toLatchkeyAccount(fx.client, { address }),
      chain,
      transport: http(node.url),
    })
    const authorization = await wallet.signAuthorization({ contractAddress: contract, executor: 'self' })
    const sent = await provider.request({
      method: 'eth_sendTransaction',
      params: [
        {
          from: address,
          type: '0x4',
          data: WORD,
          authorizationList: [
            {
              address: contract,
              chainId: numberToHex(authorization.chainId),
              nonce: numberToHex(authorization.nonce),
              r: authorization.r,
              s: authorization.s,
              yParity: numberToHex(authorization.yParity ?? 0),
            },
          ],
        },
      ],
    })
    expect(await receipt(sent)).toMatchObject({ status: '0x1', type: '0x4', to: address.toLowerCase() })
    expect(await provider.request({ method: 'eth_getStorageAt', params: [address, '0x0', 'latest'] })).toBe(
      WORD,
    )
    provider.destroy()
  })

  it('switches between configured chains with chainChanged, and signs in through signIn', async () => {
    const fx = await createClientFixture()
    const other = { ...chain, id: 31338, name: 'Other' }
    let address: Address | undefined
    const provider = createLatchkeyEip1193Provider(fx.client, {
      chains: [chain, other],
      signIn: async () => {
        address = await signedInWithFunds(fx)
      },
    })
    const changes: unknown[] = []
    provider.on('chainChanged', ((id: unknown) => changes.push(id)) as never)
    provider.on('accountsChanged', ((accounts: unknown) => changes.push(accounts)) as never)
    expect(await provider.request({ method: 'eth_requestAccounts' })).toEqual([address])
    await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x7a6a' }] })
    expect(await provider.request({ method: 'eth_chainId' })).toBe('0x7a6a')
    expect(changes).toContainEqual('0x7a6a')
    expect(changes).toContainEqual([address])
    provider.destroy()
  })
})
