import { bytesToHex } from '@noble/hashes/utils.js'
import {
  type Address,
  appendTransactionMessageInstruction,
  type Blockhash,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { encodeFunctionData, parseAbi, serializeTransaction } from 'viem'
import { beforeEach, describe, expect, it } from 'vitest'
import { ConsensusNeededError, MfaRequiredError, SpendingLimitExceededError } from '../../errors.ts'
import { addSessionFromKey } from '../../session/sessions.ts'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { USDC_MINT, unsignedSplTransfer } from '../../test/splTransfer.ts'
import { totpCode } from '../../test/totpCode.ts'
import { getActivity } from '../queries/getActivity.ts'
import { getPolicies } from '../queries/getPolicies.ts'
import { getSpendingLimits } from '../queries/getSpendingLimits.ts'
import { getUsers } from '../queries/getUsers.ts'
import { approveActivity } from './approveActivity.ts'
import { completeMfa } from './completeMfa.ts'
import { confirmTotpFactor } from './confirmTotpFactor.ts'
import { createMfaPolicy } from './createMfaPolicy.ts'
import { createSpendingLimit } from './createSpendingLimit.ts'
import { createTotpFactor } from './createTotpFactor.ts'
import { createWallet } from './createWallet.ts'
import { deleteSpendingLimit } from './deleteSpendingLimit.ts'
import { grantAgentAllowance } from './grantAgentAllowance.ts'
import { revokeAgentAllowance } from './revokeAgentAllowance.ts'
import { sendCalls } from './sendCalls.ts'
import { signRawPayloads } from './signRawPayloads.ts'
import { signTransaction } from './signTransaction.ts'
import { updateSpendingLimit } from './updateSpendingLimit.ts'

const SHOP = '0x00000000000000000000000000000000000f00d5'
const OTHER = '0x000000000000000000000000000000000000dead'
let nonce = 0
/** A transaction that pays no fee: a native limit counts its value alone (a fee counts too). */
const tx = (to: string, value: bigint) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 8453,
    nonce: nonce++,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    gas: 21_000n,
    to: to as `0x${string}`,
    value,
  })

describe('spending limits and agent allowances against the local service', () => {
  let fx: ClientFixture
  let address: string
  let organizationId: string
  beforeEach(async () => {
    fx = await createClientFixture()
    ;({ organizationId } = await fx.signUpDirect())
    address = (await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] }))
      .addresses[0] as string
  })

  const sign = (to: string, value: bigint, sessionId?: string) =>
    signTransaction(fx.client, {
      signWith: address,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: tx(to, value),
      sessionId,
    })

  it('creates, lists with usage, updates and deletes a limit; a spend over it is a SpendingLimitExceededError', async () => {
    const { spendingLimitId } = await createSpendingLimit(fx.client, {
      spendingLimitName: 'daily',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:8453' },
      amount: '10',
    })
    await sign(OTHER, 8n)
    expect((await getSpendingLimits(fx.client)).spendingLimits).toMatchObject([
      { spendingLimitId, amount: '10', used: '8', remaining: '2' },
    ])
    const refused = await sign(OTHER, 3n).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(SpendingLimitExceededError)
    expect(refused).toMatchObject({
      code: 'SPENDING_LIMIT_EXCEEDED',
      status: 429,
      spendingLimitId,
      limit: '10',
      used: '8',
      remaining: '2',
      requested: '3',
    })
    const frees = (refused as SpendingLimitExceededError).freesAtTimestampMs as number
    expect(frees).toBeGreaterThan(Date.now() + 23 * 3600_000)
    // A raw payload cannot be read as a spend: refused while the limit covers the account.
    await expect(
      signRawPayloads(fx.client, {
        signWith: address,
        payloads: [`0x${'ab'.repeat(32)}`],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    ).rejects.toMatchObject({ code: 'SPEND_UNDECODABLE', status: 403 })
    await updateSpendingLimit(fx.client, { spendingLimitId, amount: '11' })
    await sign(OTHER, 3n)
    expect((await getSpendingLimits(fx.client)).spendingLimits[0]).toMatchObject({
      used: '11',
      remaining: '0',
    })
    await expect(
      createSpendingLimit(fx.client, {
        spendingLimitName: 'bad',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_YEAR' as never },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:8453' },
        amount: '10',
      }),
    ).rejects.toMatchObject({ code: 'ENUM_INVALID', field: 'parameters.window.period' })
    await deleteSpendingLimit(fx.client, { spendingLimitId })
    expect((await getSpendingLimits(fx.client)).spendingLimits).toEqual([])
    await sign(OTHER, 100n)
  })

  it('grants an agent an allowance it cannot exceed or widen, and revokes it', async () => {
    const agentKey = await fx.client.keyStore.create({ scope: fx.client.config.organizationId })
    const user = fx.client.store.getState().activeId as string
    const grant = await grantAgentAllowance(fx.client, {
      agentName: 'Shopping agent',
      publicKey: agentKey.publicKey,
      caip2: 'eip155:8453',
      amount: '5',
      period: 'PERIOD_DAY',
      allowedDestinations: [SHOP],
    })
    const [limit] = (await getSpendingLimits(fx.client)).spendingLimits
    expect(limit).toMatchObject({
      spendingLimitId: grant.spendingLimitId,
      scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId: grant.apiKeyId },
      allowedDestinations: [SHOP],
    })
    const agent = addSessionFromKey(fx.client, {
      publicKey: agentKey.publicKey,
      userId: grant.userId,
      organizationId,
      lifetimeSeconds: 3600,
      method: 'api-key',
      label: 'agent',
    })
    await sign(SHOP, 4n, agent.id)
    await expect(sign(SHOP, 2n, agent.id)).rejects.toBeInstanceOf(SpendingLimitExceededError)
    await expect(sign(OTHER, 1n, agent.id)).rejects.toMatchObject({ code: 'SPEND_DESTINATION_NOT_ALLOWED' })
    // The agent can neither raise its own limit nor grant itself another key.
    await expect(
      updateSpendingLimit(fx.client, {
        spendingLimitId: grant.spendingLimitId,
        amount: '1000',
        sessionId: agent.id,
      }),
    ).rejects.toMatchObject({ code: 'PERMISSION_DENIED' })
    await expect(
      grantAgentAllowance(fx.client, {
        agentName: 'me again',
        publicKey: agentKey.publicKey,
        caip2: 'eip155:8453',
        amount: '1000',
        period: 'PERIOD_DAY',
        sessionId: agent.id,
      }),
    ).rejects.toMatchObject({ code: 'PERMISSION_DENIED' })
    // Revoked: the key is gone at once, with its policy and its limit.
    const revoked = await revokeAgentAllowance(fx.client, {
      spendingLimitId: grant.spendingLimitId,
      sessionId: user,
    })
    expect(revoked).toEqual({
      spendingLimitId: grant.spendingLimitId,
      userId: grant.userId,
      policyIds: [grant.policyId],
    })
    expect((await getSpendingLimits(fx.client, { sessionId: user })).spendingLimits).toEqual([])
    expect((await getPolicies(fx.client, { sessionId: user })).policies).toEqual([])
    await expect(sign(SHOP, 1n, agent.id)).rejects.toMatchObject({ status: 401 })
    await expect(
      revokeAgentAllowance(fx.client, { spendingLimitId: grant.spendingLimitId, sessionId: user }),
    ).rejects.toMatchObject({ code: 'SPENDING_LIMIT_NOT_FOUND' })
  })

  it('undoes a grant the service refuses half-way: no agent user, key or limit is left behind', async () => {
    const grant = (publicKey: string) =>
      grantAgentAllowance(fx.client, {
        agentName: 'Shopping agent',
        publicKey,
        caip2: 'eip155:8453',
        amount: '5',
        period: 'PERIOD_DAY',
      })
    const first = await grant((await fx.client.keyStore.create({ scope: 'agent' })).publicKey)
    const users = (await getUsers(fx.client, {})).users.map((user) => user.userId)
    // Another key, the same name: the agent's user and limit are made, then its policy's name is taken.
    const second = await fx.client.keyStore.create({ scope: 'agent' })
    await expect(grant(second.publicKey)).rejects.toMatchObject({ code: 'ALREADY_EXISTS' })
    expect((await getUsers(fx.client, {})).users.map((user) => user.userId)).toEqual(users)
    expect((await getSpendingLimits(fx.client)).spendingLimits.map((limit) => limit.spendingLimitId)).toEqual(
      [first.spendingLimitId],
    )
    const agent = addSessionFromKey(fx.client, {
      publicKey: second.publicKey,
      userId: first.userId,
      organizationId,
      lifetimeSeconds: 3600,
      method: 'api-key',
      label: 'refused agent',
    })
    await expect(sign(SHOP, 1n, agent.id)).rejects.toMatchObject({ status: 401 })
  })

  it('refuses a key that is not a compressed P-256 public key before asking the service', async () => {
    await expect(
      grantAgentAllowance(fx.client, {
        agentName: 'x',
        publicKey: 'not a key',
        caip2: 'eip155:8453',
        amount: '1',
        period: 'PERIOD_DAY',
      }),
    ).rejects.toMatchObject({ code: 'FIELD_INVALID', field: 'publicKey' })
    expect((await getUsers(fx.client, {})).users).toHaveLength(1)
  })
})

describe('an agent allowance granted under MFA', () => {
  // The service's clock, moved a 30 s step ahead for each fresh TOTP code.
  let offsetMs = 0
  const now = () => Date.now() + offsetMs
  const TOTP = { any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' as const }] }

  async function challengeOf<T>(promise: Promise<T>): Promise<MfaRequiredError<T>> {
    const error = await promise.then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(MfaRequiredError)
    return error as MfaRequiredError<T>
  }

  it('waits at create_users and again at create_policy; completing both grants a key that signs within its limit; the revoke waits at delete_users and again at delete_policies', async () => {
    offsetMs = 0
    const fx = await createClientFixture({}, { clock: { now } } as never)
    const { organizationId } = await fx.signUpDirect()
    const address = (await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] }))
      .addresses[0] as string
    const { factorId, secret } = await createTotpFactor(fx.client, { factorName: 'Phone' })
    await confirmTotpFactor(fx.client, { factorId, code: totpCode(secret, now()) })
    await createMfaPolicy(fx.client, {
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [TOTP],
      order: 0,
    })
    const agentKey = await fx.client.keyStore.create({ scope: organizationId })
    const user = fx.client.store.getState().activeId as string
    const first = await challengeOf(
      grantAgentAllowance(fx.client, {
        agentName: 'Shopping agent',
        publicKey: agentKey.publicKey,
        caip2: 'eip155:8453',
        amount: '5',
        period: 'PERIOD_DAY',
        allowedDestinations: [SHOP],
      }),
    )
    expect(first.activity.type).toMatch(/CREATE_USERS/)
    offsetMs = 30_000
    // The very code that proves the first step (not one computed again later, which a real 30 s
    // boundary passed meanwhile would make the next step's).
    const firstCode = totpCode(secret, now())
    const second = await challengeOf(completeMfa(fx.client, { challenge: first, totpCode: firstCode }))
    expect(second.activity.type).toMatch(/CREATE_POLICY/)
    expect(second.activityId).not.toBe(first.activityId)
    // The code that proved the first step is a replay for the second: the next one is needed.
    await expect(completeMfa(fx.client, { challenge: second, totpCode: firstCode })).rejects.toMatchObject({
      code: 'OTP_INVALID',
    })
    offsetMs = 60_000
    const grant = await completeMfa(fx.client, { challenge: second, totpCode: totpCode(secret, now()) })
    expect(grant).toEqual({
      userId: expect.any(String),
      apiKeyId: expect.any(String),
      spendingLimitId: expect.any(String),
      policyId: expect.any(String),
    })
    expect((await getSpendingLimits(fx.client)).spendingLimits).toMatchObject([
      { spendingLimitId: grant.spendingLimitId, scope: { apiKeyId: grant.apiKeyId } },
    ])
    const agent = addSessionFromKey(fx.client, {
      publicKey: agentKey.publicKey,
      userId: grant.userId,
      organizationId,
      lifetimeSeconds: 3600,
      method: 'api-key',
      label: 'agent',
    })
    const sign = (value: bigint) =>
      signTransaction(fx.client, {
        signWith: address,
        type: 'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransaction: tx(SHOP, value),
        sessionId: agent.id,
      })
    await sign(4n)
    await expect(sign(2n)).rejects.toBeInstanceOf(SpendingLimitExceededError)

    // The revoke waits at delete_users first: until its code comes, the agent's user and key stand.
    const revoking = await challengeOf(
      revokeAgentAllowance(fx.client, { spendingLimitId: grant.spendingLimitId, sessionId: user }),
    )
    expect(revoking.activity.type).toMatch(/DELETE_USERS/)
    await sign(1n)
    // With the code the agent's key is gone, and the rest of the revoke waits again at delete_policies.
    offsetMs = 90_000
    const policyStep = await challengeOf(
      completeMfa(fx.client, { challenge: revoking, totpCode: totpCode(secret, now()), sessionId: user }),
    )
    expect(policyStep.activity.type).toMatch(/DELETE_POLICIES/)
    await expect(sign(1n)).rejects.toMatchObject({ status: 401 })
    offsetMs = 120_000
    const revoked = await completeMfa(fx.client, {
      challenge: policyStep,
      totpCode: totpCode(secret, now()),
      sessionId: user,
    })
    expect(revoked).toEqual({
      spendingLimitId: grant.spendingLimitId,
      userId: grant.userId,
      policyIds: [grant.policyId],
    })
    expect((await getSpendingLimits(fx.client, { sessionId: user })).spendingLimits).toEqual([])
  })
})

describe("an agent allowance: the agent's key signs only what its limit counts", () => {
  const THIEF = '0x000000000000000000000000000000000000beef'
  const USDC_BASE = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'
  const DAI_BASE = '0x50c5725949a6f0c72e6c4a641f24049a917db0cb'
  const SHOP_SOL = 'GZNvf6JHw5b3KQwS2pPTyb3EMRgqSthWKXbHQ8jPNH8c' as Address
  const BONK_MINT = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263' as Address
  const erc20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)'])
  /** An EIP-1559 transaction paying no fee (a native limit counts its value alone). */
  const evmTx = (chainId: number, to: string, value: bigint, data?: `0x${string}`) =>
    serializeTransaction({
      type: 'eip1559',
      chainId,
      nonce: nonce++,
      maxFeePerGas: 0n,
      maxPriorityFeePerGas: 0n,
      gas: 100_000n,
      to: to as `0x${string}`,
      value,
      ...(data ? { data } : {}),
    })
  const transfer = (to: string, amount: bigint) =>
    encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [to as `0x${string}`, amount] })
  /** An unsigned Solana System transfer of `amount` lamports from `from`, who pays the fee. */
  const solTransfer = (from: Address, to: Address, amount: bigint) => {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(from, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          {
            blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' as Blockhash,
            lastValidBlockHeight: 0n,
          },
          m,
        ),
      (m) =>
        appendTransactionMessageInstruction(
          getTransferSolInstruction({
            source: createNoopSigner(from),
            destination: to,
            amount: lamports(amount),
          }),
          m,
        ),
    )
    return bytesToHex(new Uint8Array(getTransactionEncoder().encode(compileTransaction(message))))
  }

  let fx: ClientFixture
  let organizationId: string
  let evm: string
  let sol: Address
  /** The user's session, which grants (an agent's session becomes the active one). */
  let user: string
  beforeEach(async () => {
    fx = await createClientFixture()
    ;({ organizationId } = await fx.signUpDirect())
    user = fx.client.store.getState().activeId as string
    const { addresses } = await createWallet(fx.client, {
      walletName: 'Main',
      chains: ['ethereum', 'solana'],
    })
    evm = addresses[0] as string
    sol = addresses[1] as Address
  })

  /** Grants `grant`'s allowance to a new agent key and signs as that key. */
  async function grantedAgent(grant: Partial<Parameters<typeof grantAgentAllowance>[1]>) {
    const agentKey = await fx.client.keyStore.create({ scope: fx.client.config.organizationId })
    const { userId } = await grantAgentAllowance(fx.client, {
      agentName: 'Shopping agent',
      publicKey: agentKey.publicKey,
      caip2: 'eip155:8453',
      amount: '5',
      period: 'PERIOD_DAY',
      sessionId: user,
      ...grant,
    })
    const agent = addSessionFromKey(fx.client, {
      publicKey: agentKey.publicKey,
      userId,
      organizationId,
      lifetimeSeconds: 3600,
      method: 'api-key',
      label: 'agent',
    })
    return {
      sessionId: agent.id,
      evm: (unsignedTransaction: string) =>
        signTransaction(fx.client, {
          signWith: evm,
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction,
          sessionId: agent.id,
        }),
      solana: (unsignedTransaction: string) =>
        signTransaction(fx.client, {
          signWith: sol,
          type: 'TRANSACTION_TYPE_SOLANA',
          unsignedTransaction,
          sessionId: agent.id,
        }),
      raw: () =>
        signRawPayloads(fx.client, {
          signWith: evm,
          payloads: [`0x${'ab'.repeat(32)}`],
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_NO_OP',
          sessionId: agent.id,
        }),
    }
  }
  const denied = { code: 'PERMISSION_DENIED', details: { outcome: 'OUTCOME_DENY_IMPLICIT' } }

  it('control: on the allowance chain, over the cap or to another address, the agent is refused by its limit', async () => {
    const sign = (await grantedAgent({ allowedDestinations: [SHOP] })).evm
    await sign(evmTx(8453, SHOP, 4n))
    await expect(sign(evmTx(8453, SHOP, 2n))).rejects.toBeInstanceOf(SpendingLimitExceededError)
    await expect(sign(evmTx(8453, THIEF, 1n))).rejects.toMatchObject({
      code: 'SPEND_DESTINATION_NOT_ALLOWED',
    })
  })

  it('"5 wei of Base ETH a day, only to SHOP": no ETH on another chain, no token on Base, no raw payload', async () => {
    const agent = await grantedAgent({ allowedDestinations: [SHOP] })
    // The same address on Ethereum mainnet, where no limit counts anything.
    await expect(agent.evm(evmTx(1, THIEF, 100n * 10n ** 18n))).rejects.toMatchObject(denied)
    await expect(agent.evm(evmTx(1, SHOP, 1n))).rejects.toMatchObject(denied)
    // A legacy transaction without a chain id is valid on every chain.
    const legacy = serializeTransaction({
      type: 'legacy',
      nonce: nonce++,
      gasPrice: 0n,
      gas: 21_000n,
      to: SHOP,
      value: 1n,
    })
    await expect(agent.evm(legacy)).rejects.toMatchObject(denied)
    // The account's USDC on Base, value 0: a native limit counts only value.
    await expect(agent.evm(evmTx(8453, USDC_BASE, 0n, transfer(THIEF, 10n ** 30n)))).rejects.toMatchObject(
      denied,
    )
    await expect(agent.raw()).rejects.toMatchObject(denied)
    await agent.evm(evmTx(8453, SHOP, 5n))
    // Sent by the service: every call of a batch is judged. A plain transfer on Base passes the
    // policy (and finds no node here); one token call in the batch, or another chain, does not.
    const send = (caip2: string, calls: { to: string; value?: string; data?: string }[]) =>
      sendCalls(fx.client, { from: evm, caip2, calls, sessionId: agent.sessionId })
    await expect(send('eip155:8453', [{ to: SHOP, value: '1' }])).rejects.toMatchObject({
      code: 'RPC_NOT_CONFIGURED',
    })
    await expect(
      send('eip155:8453', [
        { to: SHOP, value: '1' },
        { to: USDC_BASE, data: transfer(THIEF, 10n ** 30n) },
      ]),
    ).rejects.toMatchObject(denied)
    await expect(send('eip155:1', [{ to: THIEF, value: String(10n ** 20n) }])).rejects.toMatchObject(denied)
  })

  it('"25 USDC on Base": only that token\'s transfers on Base, no ETH, no other token, no other chain', async () => {
    const agent = await grantedAgent({
      amount: '25000000',
      asset: {
        type: 'SPENDING_LIMIT_ASSET_ERC20',
        caip2: 'eip155:8453',
        contract: USDC_BASE.toUpperCase().replace('0X', '0x'),
      },
      token: { symbol: 'USDC', decimals: 6 },
    })
    await agent.evm(evmTx(8453, USDC_BASE, 0n, transfer(SHOP, 20_000_000n)))
    await expect(agent.evm(evmTx(8453, USDC_BASE, 0n, transfer(SHOP, 6_000_000n)))).rejects.toBeInstanceOf(
      SpendingLimitExceededError,
    )
    // A plain ETH transfer: an ERC-20 limit counts nothing of it.
    await expect(agent.evm(evmTx(8453, THIEF, 10n ** 18n))).rejects.toMatchObject(denied)
    await expect(agent.evm(evmTx(8453, USDC_BASE, 1n, transfer(SHOP, 1n)))).rejects.toMatchObject(denied)
    await expect(agent.evm(evmTx(8453, DAI_BASE, 0n, transfer(THIEF, 10n ** 24n)))).rejects.toMatchObject(
      denied,
    )
    await expect(agent.evm(evmTx(1, USDC_BASE, 0n, transfer(THIEF, 10n ** 12n)))).rejects.toMatchObject(
      denied,
    )
  })

  it('"25 USDC on Solana": only that mint\'s transfers, no SOL, no other mint', async () => {
    const usdc = await grantedAgent({
      caip2: 'solana:mainnet',
      amount: '25000000',
      asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint: USDC_MINT },
    })
    await usdc.solana(await unsignedSplTransfer({ from: sol, to: SHOP_SOL, amount: 10_000_000n }))
    await expect(
      usdc.solana(
        await unsignedSplTransfer({ from: sol, to: SHOP_SOL, mint: BONK_MINT, amount: 10n ** 15n }),
      ),
    ).rejects.toMatchObject(denied)
    await expect(usdc.solana(solTransfer(sol, SHOP_SOL, 10n ** 9n))).rejects.toMatchObject(denied)
    await expect(usdc.evm(evmTx(8453, SHOP, 1n))).rejects.toMatchObject(denied)
  })

  it('"1 SOL on Solana": only System transfers, no token, nothing on an EVM chain', async () => {
    const agent = await grantedAgent({ caip2: 'solana:mainnet', amount: '1000000000' })
    await agent.solana(solTransfer(sol, SHOP_SOL, 1_000_000n))
    await expect(
      agent.solana(await unsignedSplTransfer({ from: sol, to: SHOP_SOL, amount: 10_000_000n })),
    ).rejects.toMatchObject(denied)
    await expect(agent.evm(evmTx(8453, SHOP, 1n))).rejects.toMatchObject(denied)
  })

  it("one agent's policy does not let another agent's key sign what its own limit does not count", async () => {
    const eth = await grantedAgent({ agentName: 'ETH agent', allowedDestinations: [SHOP] })
    const usdc = await grantedAgent({
      agentName: 'USDC agent',
      amount: '25000000',
      asset: { type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: 'eip155:8453', contract: USDC_BASE },
    })
    // The ETH agent's USDC transfer matches the USDC agent's policy, which the USDC agent's vote
    // would meet: the ETH agent's limit counts no USDC, the USDC agent's does not cover its key.
    const held = await eth.evm(evmTx(8453, USDC_BASE, 0n, transfer(THIEF, 10n ** 30n))).then(
      () => undefined,
      (error: unknown) => error,
    )
    // It waits for a vote that never meets the USDC agent's policy: only its own request does.
    expect(held).toBeInstanceOf(ConsensusNeededError)
    const { activity } = held as ConsensusNeededError
    await approveActivity(fx.client, { fingerprint: activity.fingerprint, sessionId: usdc.sessionId })
    const after = await getActivity(fx.client, { activityId: activity.id, sessionId: user })
    expect(after.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  })

  it('refuses a chain, contract, mint or SPL destination that is not one before anything is created', async () => {
    const agentKey = await fx.client.keyStore.create({ scope: 'agent' })
    const grant = (fields: Partial<Parameters<typeof grantAgentAllowance>[1]>) =>
      grantAgentAllowance(fx.client, {
        agentName: 'x',
        publicKey: agentKey.publicKey,
        caip2: 'eip155:8453',
        amount: '1',
        period: 'PERIOD_DAY',
        ...fields,
      })
    await expect(grant({ caip2: "eip155:8453' || true || '" })).rejects.toMatchObject({
      code: 'FIELD_INVALID',
      field: 'caip2',
    })
    await expect(
      grant({
        asset: {
          type: 'SPENDING_LIMIT_ASSET_ERC20',
          caip2: 'eip155:8453',
          contract: `${USDC_BASE}' || true || '`,
        },
      }),
    ).rejects.toMatchObject({ code: 'FIELD_INVALID', field: 'asset.contract' })
    await expect(
      grant({
        caip2: 'solana:mainnet',
        asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint: "x' || true" },
      }),
    ).rejects.toMatchObject({ code: 'FIELD_INVALID', field: 'asset.mint' })
    // An SPL grant's destinations go into its policy too (the owners whose token account it may create).
    await expect(
      grant({
        caip2: 'solana:mainnet',
        asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint: USDC_MINT },
        allowedDestinations: ["x'] || true || ['"],
      }),
    ).rejects.toMatchObject({ code: 'FIELD_INVALID', field: 'allowedDestinations' })
    await expect(
      grant({ asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' } }),
    ).rejects.toMatchObject({
      code: 'FIELD_INVALID',
      field: 'asset',
    })
    expect((await getUsers(fx.client, {})).users).toHaveLength(1)
    expect((await getSpendingLimits(fx.client)).spendingLimits).toEqual([])
  })
})
