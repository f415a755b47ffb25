import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { address, getTransactionDecoder, lamports } from '@solana/kit'
import { PublicKey, SystemProgram, Transaction } from '@solana/web3.js'
import { TurnkeySigner as TurnkeyEthersSigner } from '@turnkey/ethers'
import {
  DEFAULT_ETHEREUM_ACCOUNTS,
  DEFAULT_SOLANA_ACCOUNTS,
  Turnkey,
  type TurnkeyApiClient,
} from '@turnkey/sdk-server'
import { TurnkeySigner as TurnkeySolanaSigner } from '@turnkey/solana'
import { createAccount } from '@turnkey/viem'
import { JsonRpcProvider } from 'ethers'
import { FailedTransactionMetadata, LiteSVM } from 'litesvm'
import { createPublicClient, createWalletClient, http } from 'viem'
import { foundry } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../../../scripts/evmNode.mjs'
import type { Harness } from '../../src/testing/harness.ts'
import { type ServedHarness, serveHarness } from '../support/servedHarness.ts'

/**
 * The server-side packages of the published family, unchanged, against the local service: only
 * their configuration (base URL, API key, organization id) points at it. @turnkey/sdk-server 8.2.1
 * sends the newest activity versions (CREATE_SUB_ORGANIZATION_V8, CREATE_USERS_V4,
 * CREATE_POLICY_V3, UPDATE_ROOT_QUORUM); @turnkey/viem 0.14.37, @turnkey/ethers 1.3.29 and @turnkey/solana 1.1.37 sign
 * through its client with SIGN_TRANSACTION_V2.
 */

/** An API key pair as @turnkey/api-key-stamper takes it (P-256, compressed public key hex). */
function apiKeyPair() {
  const privateKey = p256.utils.randomSecretKey()
  return {
    apiPrivateKey: bytesToHex(privateKey),
    apiPublicKey: bytesToHex(p256.getPublicKey(privateKey, true)),
  }
}

let node: EvmNode
let h: Harness
let baseUrl: string
let served: ServedHarness | undefined

beforeAll(async () => {
  node = await startEvmNode()
  served = await serveHarness()
  ;({ h, baseUrl } = served)
}, 60_000)

afterAll(async () => {
  await served?.close()
  await node?.close()
})

/** An @turnkey/sdk-server client of the local service, acting as `keys` in `organizationId`. */
const clientOf = (keys: { apiPublicKey: string; apiPrivateKey: string }, organizationId: string) =>
  new Turnkey({ apiBaseUrl: baseUrl, defaultOrganizationId: organizationId, ...keys }).apiClient()

describe('@turnkey/sdk-server 8.2.1 with @turnkey/viem, @turnkey/ethers and @turnkey/solana, unchanged', () => {
  const recipient = '0x000000000000000000000000000000000000beef'
  const solanaRecipient = new PublicKey('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM')
  let subOrganizationId: string
  let ethAddress: `0x${string}`
  let solAddress: string
  let delegated: TurnkeyApiClient

  it('creates a sub-organization with a wallet and a delegated-access user with its policies (the documented flow)', async () => {
    const dev = h.service.dev
    const parent = clientOf(dev, dev.organizationId)
    const endUser = apiKeyPair()
    const backEnd = apiKeyPair()
    const rootUser = (userName: string, apiPublicKey: string) => ({
      userName,
      apiKeys: [{ apiKeyName: userName, publicKey: apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const }],
      authenticators: [],
      oauthProviders: [],
    })
    const created = await parent.createSubOrganization({
      subOrganizationName: 'End user',
      rootUsers: [
        rootUser('End user', endUser.apiPublicKey),
        rootUser('Delegated back end', backEnd.apiPublicKey),
      ],
      rootQuorumThreshold: 1,
      wallet: { walletName: 'Default', accounts: [...DEFAULT_ETHEREUM_ACCOUNTS, ...DEFAULT_SOLANA_ACCOUNTS] },
    })
    expect(created.activity.type).toBe('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8')
    subOrganizationId = created.subOrganizationId
    const [endUserId, delegatedUserId] = created.rootUserIds!
    const [eth, sol] = created.wallet!.addresses
    ethAddress = eth as `0x${string}`
    solAddress = sol!

    // While still a root user, the back end gives itself policies, then leaves the root quorum.
    delegated = clientOf(backEnd, subOrganizationId)
    const signing = "activity.resource == 'WALLET' && activity.action == 'SIGN'"
    for (const [policyName, condition] of [
      ['Back end pays the merchant', `${signing} && eth.tx.to == '${recipient}'`],
      ['Back end signs Solana', `${signing} && wallet_account.address == '${solAddress}'`],
    ] as const) {
      const policy = await delegated.createPolicy({
        policyName,
        effect: 'EFFECT_ALLOW',
        consensus: `approvers.any(user, user.id == '${delegatedUserId}')`,
        condition,
        notes: '',
      })
      expect(policy.activity.type).toBe('ACTIVITY_TYPE_CREATE_POLICY_V3')
    }
    await delegated.updateRootQuorum({ threshold: 1, userIds: [endUserId!] })
    const organization = await h.service.store.get('organizations', subOrganizationId)
    expect(organization?.rootUserIds).toEqual([endUserId])

    // The end user's own client adds a user the newest types' way (CREATE_USERS_V4).
    const owner = clientOf(endUser, subOrganizationId)
    const { activity } = await owner.createUsers({
      users: [{ userName: 'Support', apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
    })
    expect(activity.type).toBe('ACTIVITY_TYPE_CREATE_USERS_V4')
  })

  it("signs with the delegated key through @turnkey/viem's account; anvil mines it; the policy holds", async () => {
    await node.rpc('anvil_setBalance', [ethAddress, `0x${(10n ** 18n).toString(16)}`])
    const account = await createAccount({
      client: delegated as never,
      organizationId: subOrganizationId,
      signWith: ethAddress,
    })
    const wallet = createWalletClient({ account, chain: foundry, transport: http(node.url) })
    const chain = createPublicClient({ chain: foundry, transport: http(node.url) })
    const hash = await wallet.sendTransaction({ to: recipient, value: 1234n })
    const receipt = await chain.waitForTransactionReceipt({ hash })
    expect(receipt).toMatchObject({ status: 'success', from: ethAddress.toLowerCase() })
    expect(await chain.getBalance({ address: recipient })).toBe(1234n)
    await expect(
      wallet.sendTransaction({ to: '0x000000000000000000000000000000000000dead', value: 1n }),
    ).rejects.toThrow(/denied|policy|POLICY/i)
  })

  it("signs with the delegated key through @turnkey/ethers' signer; anvil mines it", async () => {
    const provider = new JsonRpcProvider(node.url, 31337, { staticNetwork: true })
    const signer = new TurnkeyEthersSigner({
      client: delegated as never,
      organizationId: subOrganizationId,
      signWith: ethAddress,
    }).connect(provider)
    expect(await signer.getAddress()).toBe(ethAddress)
    const sent = await signer.sendTransaction({ to: recipient, value: 766n })
    const receipt = await sent.wait()
    expect(receipt?.status).toBe(1)
    expect(await provider.getBalance(recipient)).toBe(2000n)
    provider.destroy()
  })

  it('signs a Solana transfer through @turnkey/solana that LiteSVM executes', async () => {
    const svm = new LiteSVM()
    const from = new PublicKey(solAddress)
    svm.airdrop(address(solAddress), lamports(1_000_000_000n))
    const transaction = new Transaction({
      feePayer: from,
      recentBlockhash: svm.latestBlockhash(),
    }).add(SystemProgram.transfer({ fromPubkey: from, toPubkey: solanaRecipient, lamports: 5_000_000 }))
    const signer = new TurnkeySolanaSigner({ organizationId: subOrganizationId, client: delegated as never })
    await signer.addSignature(transaction, solAddress)
    expect(transaction.verifySignatures()).toBe(true)
    const outcome = svm.sendTransaction(getTransactionDecoder().decode(transaction.serialize()))
    if (outcome instanceof FailedTransactionMetadata)
      throw new Error(`LiteSVM refused the transaction: ${outcome.err()} ${outcome.meta().logs().join('\n')}`)
    expect(svm.getBalance(address(solanaRecipient.toBase58()))).toBe(5_000_000n)
  })
})
