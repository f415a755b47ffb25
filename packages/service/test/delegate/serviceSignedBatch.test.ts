import { readFileSync } from 'node:fs'
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  type Hex,
  http,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { anvil } from 'viem/chains'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../../../scripts/evmNode.mjs'
import {
  batchExecutionTypedData,
  DELEGATE_ADDRESS,
  deployDelegate,
  encodeExecuteBatch,
  httpEthRpc,
  readDelegateNonce,
} from '../../src/sending/delegate/index.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf } from '../../src/testing/harness.ts'

// The standard development mnemonic's first two accounts, funded by anvil.
const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const SPONSOR_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'

const token = JSON.parse(
  readFileSync(new URL('../../../../contracts/test/TestToken.json', import.meta.url), 'utf8'),
) as { abi: Abi; bytecode: Hex }

let node: EvmNode

beforeAll(async () => {
  node = await startEvmNode()
  await deployDelegate(node.url, DEPLOYER_KEY)
}, 60_000)

afterAll(async () => {
  await node?.close()
})

// The keys stay in the service: it signs the EIP-7702 authorization and the EIP-712 batch with its
// existing sign_raw_payloads encodings, and the contract accepts both.
it('runs a batch a service-held 0-ETH account signed, relayed and paid for by a sponsor', async () => {
  const chain = { ...anvil, rpcUrls: { default: { http: [node.url] } } }
  const client = createPublicClient({ chain, transport: http(node.url), pollingInterval: 50 })
  const sponsor = privateKeyToAccount(SPONSOR_KEY)
  const wallet = createWalletClient({
    account: sponsor,
    chain,
    transport: http(node.url),
    pollingInterval: 50,
  })
  const deployed = await wallet.deployContract({
    abi: token.abi,
    bytecode: token.bytecode,
    account: sponsor,
    chain,
  })
  const tokenAddress = getAddress(
    (await client.waitForTransactionReceipt({ hash: deployed })).contractAddress as Hex,
  )

  const h = await createHarness()
  const { addresses } = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: 'Sponsored', accounts: [ETHEREUM_ACCOUNT] }),
  )
  const user = getAddress(addresses[0])
  const mint = await wallet.sendTransaction({
    account: sponsor,
    chain,
    to: tokenAddress,
    data: encodeFunctionData({ abi: token.abi, functionName: 'mint', args: [user, 100n] }),
  })
  await client.waitForTransactionReceipt({ hash: mint })
  const sign = async (payload: string, encoding: string) => {
    h.clock.advance(1)
    const { signatures } = resultOf(
      'sign_raw_payloads',
      await h.submit('sign_raw_payloads', {
        signWith: user,
        payloads: [payload],
        encoding,
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      }),
    )
    const { r, s, v } = signatures[0] as { r: string; s: string; v: string }
    return { r: `0x${r}` as Hex, s: `0x${s}` as Hex, yParity: Number.parseInt(v, 16) }
  }

  const authorization = await sign(
    JSON.stringify({ chainId: 31337, address: DELEGATE_ADDRESS, nonce: 0 }),
    'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
  )
  const recipient = privateKeyToAccount(`0x${'02'.repeat(32)}`).address
  const batch = {
    calls: [
      {
        to: tokenAddress,
        value: 0n,
        data: encodeFunctionData({ abi: token.abi, functionName: 'approve', args: [recipient, 40n] }),
      },
      {
        to: tokenAddress,
        value: 0n,
        data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [recipient, 60n] }),
      },
    ],
    nonce: await readDelegateNonce(httpEthRpc(node.url), user),
    deadline: (await client.getBlock()).timestamp + 300n,
  }
  const signed = await sign(
    JSON.stringify(batchExecutionTypedData({ chainId: 31337n, account: user, ...batch })),
    'PAYLOAD_ENCODING_EIP712',
  )
  const signature = `${signed.r}${signed.s.slice(2)}${(27 + signed.yParity).toString(16)}`
  const hash = await wallet.sendTransaction({
    account: sponsor,
    chain,
    to: user,
    data: encodeExecuteBatch({ ...batch, signature }) as Hex,
    authorizationList: [{ chainId: 31337, address: DELEGATE_ADDRESS as Hex, nonce: 0, ...authorization }],
  })
  const receipt = await client.waitForTransactionReceipt({ hash })
  expect(receipt.status).toBe('success')
  const read = (functionName: string, args: unknown[]) =>
    client.readContract({ address: tokenAddress, abi: token.abi, functionName, args })
  expect([
    await read('balanceOf', [user]),
    await read('balanceOf', [recipient]),
    await read('allowance', [user, recipient]),
  ]).toEqual([40n, 60n, 40n])
  expect(await client.getBalance({ address: user })).toBe(0n)
  expect(await readDelegateNonce(httpEthRpc(node.url), user)).toBe(1n)
})
