import { readFileSync } from 'node:fs'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
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
  deployDelegate,
  httpEthRpc,
  readDelegateNonce,
  readDelegation,
} from '../../src/sending/delegate/index.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { createHarness, fakeClock, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { waitForSend } from '../sending/sendSupport.ts'

// anvil's first development account (funded): deploys the contracts and mints the test token.
const FAUCET_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const CAIP2 = 'eip155:31337'
const token = JSON.parse(
  readFileSync(new URL('../../../../contracts/test/TestToken.json', import.meta.url), 'utf8'),
) as { abi: Abi; bytecode: Hex }

let node: EvmNode

beforeAll(async () => {
  node = await startEvmNode()
}, 60_000)

afterAll(async () => {
  await node?.close()
})

/** One call to the auth proxy, as the app's page makes it. */
async function proxy(h: Harness, path: string, body: unknown) {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: 'http://app.test',
    },
    body: JSON.stringify(body),
  })
  const reply = (await res.json()) as Record<string, unknown>
  expect({ path, status: res.status, reply }).toMatchObject({ path, status: 200 })
  return reply
}

/** Signs up by e-mail OTP through the auth proxy; the session key stamps the user's requests. */
async function signUpByEmail(h: Harness, email: string) {
  const privateKey = p256.utils.randomSecretKey()
  const publicKey = bytesToHex(p256.getPublicKey(privateKey, true))
  const signRaw = (text: string) =>
    bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format: 'compact' }))
  const init = await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  const outbox = await h.service.app.request(`/dev/outbox?contact=${encodeURIComponent(email)}`, {
    headers: { Accept: 'application/json' },
  })
  const { code } = ((await outbox.json()) as { messages: { code: string }[] }).messages[0]!
  const { verificationToken } = (await proxy(h, 'otp_verify', {
    otpId: init.otpId,
    otpCode: code,
    public_key: publicKey,
  })) as { verificationToken: string }
  const signup = (await proxy(h, 'signup', {
    userEmail: email,
    verificationToken,
    client_signature: signRaw(verificationToken),
    apiKeys: [],
    authenticators: [],
    oauthProviders: [],
    wallet: { path: "m/44'/60'/0'/0/0", curve: 'CURVE_SECP256K1' },
  })) as { organizationId: string; addresses: string[] }
  await proxy(h, 'otp_login', { verificationToken, publicKey, client_signature: signRaw(verificationToken) })
  return {
    organizationId: signup.organizationId,
    address: getAddress(signup.addresses[0]!),
    session: testKey('SIGNATURE_SCHEME_TK_API_P256', privateKey),
  }
}

it('a user who just signed up by e-mail and holds no ETH sends a sponsored approve + transfer', async () => {
  const chain = { ...anvil, rpcUrls: { default: { http: [node.url] } } }
  const client = createPublicClient({ chain, transport: http(node.url), pollingInterval: 50 })
  const faucet = privateKeyToAccount(FAUCET_KEY)
  const wallet = createWalletClient({
    account: faucet,
    chain,
    transport: http(node.url),
    pollingInterval: 50,
  })
  const delegate = await deployDelegate(node.url, FAUCET_KEY)
  const deployed = await wallet.deployContract({
    abi: token.abi,
    bytecode: token.bytecode,
    account: faucet,
    chain,
  })
  const tokenAddress = getAddress(
    (await client.waitForTransactionReceipt({ hash: deployed })).contractAddress!,
  )

  // The chain's blocks carry real time: so does the service's clock.
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    rpc: { [CAIP2]: node.url },
    sending: { pollIntervalMs: 20 },
    sponsorship: { delegates: { [CAIP2]: delegate } },
  })
  const sponsor = getAddress(sponsorAddress(h.service.runtime)!)
  await node.rpc('anvil_setBalance', [sponsor, `0x${(10n ** 19n).toString(16)}`])
  const user = await signUpByEmail(h, 'grace@example.com')
  const minted = await wallet.sendTransaction({
    account: faucet,
    chain,
    to: tokenAddress,
    data: encodeFunctionData({ abi: token.abi, functionName: 'mint', args: [user.address, 100n] }),
  })
  await client.waitForTransactionReceipt({ hash: minted })
  expect(await client.getBalance({ address: user.address })).toBe(0n)

  const spender = privateKeyToAccount(`0x${'03'.repeat(32)}`).address
  const recipient = privateKeyToAccount(`0x${'04'.repeat(32)}`).address
  const call = (functionName: 'approve' | 'transfer', to: Hex, amount: bigint) => ({
    to: tokenAddress,
    value: '0',
    data: encodeFunctionData({ abi: token.abi, functionName, args: [to, amount] }),
  })
  const sponsorBefore = await client.getBalance({ address: sponsor })
  h.clock.set(Date.now())
  const reply = await h.submit(
    'eth_send_transaction',
    {
      from: user.address,
      caip2: CAIP2,
      sponsor: true,
      calls: [call('approve', spender, 25n), call('transfer', recipient, 60n)],
    },
    { as: user.session, organizationId: user.organizationId },
  )
  const { sendTransactionStatusId } = resultOf('eth_send_transaction', reply)
  const status = await waitForSend(h, sendTransactionStatusId, {
    organizationId: user.organizationId,
    as: { as: user.session, organizationId: user.organizationId },
  })
  expect(status).toMatchObject({ txStatus: 'INCLUDED', eth: { receipt: { status: 'success' } } })

  const mined = await client.getTransaction({ hash: status.eth.txHash })
  expect({ type: mined.type, from: getAddress(mined.from), to: mined.to && getAddress(mined.to) }).toEqual({
    type: 'eip7702',
    from: sponsor,
    to: user.address,
  })
  const read = (functionName: string, args: unknown[]) =>
    client.readContract({ address: tokenAddress, abi: token.abi, functionName, args })
  expect({
    user: await read('balanceOf', [user.address]),
    recipient: await read('balanceOf', [recipient]),
    allowance: await read('allowance', [user.address, spender]),
  }).toEqual({ user: 40n, recipient: 60n, allowance: 25n })
  const receipt = await client.getTransactionReceipt({ hash: status.eth.txHash })
  expect(await client.getBalance({ address: user.address })).toBe(0n)
  expect(await client.getBalance({ address: sponsor })).toBe(
    sponsorBefore - receipt.gasUsed * receipt.effectiveGasPrice,
  )
  const rpc = httpEthRpc(node.url)
  expect(await readDelegation(rpc, user.address)).toBe(delegate.toLowerCase())
  expect(await readDelegateNonce(rpc, user.address)).toBe(1n)
  await h.service.close()
})
