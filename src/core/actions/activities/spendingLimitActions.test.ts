import { serializeTransaction } from 'viem'
import { beforeEach, describe, expect, it } from 'vitest'
import { MfaRequiredError, SpendingLimitExceededError } from '../../errors.ts'
import { addSessionFromKey } from '../../session/sessions.ts'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { totpCode } from '../../test/totpCode.ts'
import { getPolicies } from '../queries/getPolicies.ts'
import { getSpendingLimits } from '../queries/getSpendingLimits.ts'
import { getUsers } from '../queries/getUsers.ts'
import { completeMfa } from './completeMfa.ts'
import { confirmTotpFactor } from './confirmTotpFactor.ts'
import { createMfaPolicy } from './createMfaPolicy.ts'
import { createSpendingLimit } from './createSpendingLimit.ts'
import { createTotpFactor } from './createTotpFactor.ts'
import { createWallet } from './createWallet.ts'
import { deleteSpendingLimit } from './deleteSpendingLimit.ts'
import { grantAgentAllowance } from './grantAgentAllowance.ts'
import { revokeAgentAllowance } from './revokeAgentAllowance.ts'
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

  it('waits at create_users and again at create_policy; completing both grants a key that signs within its limit', async () => {
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

    // The revoke waits once, at delete_policies (the agent's key is already gone), and finishes.
    const revoking = await challengeOf(
      revokeAgentAllowance(fx.client, { spendingLimitId: grant.spendingLimitId, sessionId: user }),
    )
    await expect(sign(1n)).rejects.toMatchObject({ status: 401 })
    offsetMs = 90_000
    const revoked = await completeMfa(fx.client, {
      challenge: revoking,
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
