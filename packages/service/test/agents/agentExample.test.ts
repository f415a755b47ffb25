// The agent-key recipe (examples/agent/agent.ts, docs/agents.md) against a served test service,
// through the published @turnkey/http client: the agent signs within its allowance, is refused over
// it with the typed 429, and cannot raise its limit, create a key, export, or reach another wallet;
// the user revoking its key stops it. Its policy names the limit's chain and plain transfers only
// (a limit counts nothing on another chain, nor tokens moved by calldata); a grant whose limit or
// policy step fails is undone; a recipient, wallet id or chain that could rewrite the condition is
// refused before anything is made (and so in examples/delegated-access.ts).
import { hexToBytes } from '@noble/hashes/utils.js'
import type { TurnkeyClient } from '@turnkey/http'
import { serializeTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  agentTransfer,
  clientOf,
  grantAgent,
  newAgentKey,
  type Refusal,
  refusalOf,
  revokeAgent,
} from '../../../../examples/agent/agent.ts'
import { delegationPolicies } from '../../../../examples/delegated-access.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { type ServedHarness, serveHarness } from '../support/servedHarness.ts'

const MERCHANT = '0x000000000000000000000000000000000000beef'
const ETH = 10n ** 18n
/** A recipient as an app might take it from a checkout request or a form, quote and all. */
const INJECTED = `${MERCHANT}' || true || 'x`

let h: Harness
let baseUrl: string
let served: ServedHarness | undefined

beforeAll(async () => {
  served = await serveHarness()
  ;({ h, baseUrl } = served)
}, 60_000)

afterAll(async () => {
  await served?.close()
})

/** The refusal a call fails with (it must fail). */
async function refused(call: Promise<unknown>): Promise<Refusal> {
  try {
    await call
  } catch (error) {
    const refusal = refusalOf(error)
    if (refusal) return refusal
    throw error
  }
  throw new Error('expected a refusal')
}

/** A sub-organization whose root user (`owner`, through the published client) holds one EVM wallet. */
async function userWithWallet() {
  const userKey = newAgentKey()
  const sub = await h.createSubOrganization({
    keys: [testKey('SIGNATURE_SCHEME_TK_API_P256', hexToBytes(userKey.apiPrivateKey))],
    wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
  })
  h.clock.advance(1)
  const owner = clientOf(baseUrl, userKey)
  const organizationId = sub.organizationId
  return {
    sub,
    owner,
    organizationId,
    walletId: sub.walletId!,
    from: sub.addresses![0]!,
    /** What the grant made: the organization's users, policies and spending limits. */
    made: async () => ({
      users: (await owner.getUsers({ organizationId })).users.map((user) => user.userName).sort(),
      policies: (await owner.getPolicies({ organizationId })).policies.length,
      limits: (await h.query('latchkey_list_spending_limits', {}, { as: sub.keys[0]!, organizationId })).body
        .spendingLimits.length,
    }),
  }
}

/** Whether `agent` may export the wallet: the activity's status, or the refusal's code. */
const exportOutcome = (agent: TurnkeyClient, organizationId: string, walletId: string) =>
  agent
    .exportWallet({
      type: 'ACTIVITY_TYPE_EXPORT_WALLET',
      timestampMs: String(Date.now()),
      organizationId,
      parameters: { walletId, targetPublicKey: newAgentKey().apiPublicKey },
    })
    .then(
      (reply) => reply.activity.status,
      (error: unknown) => `refused: ${refusalOf(error)?.errorCode ?? (error as Error).message}`,
    )

describe('agent keys (examples/agent/agent.ts)', () => {
  it('signs within its allowance, is refused over it, cannot widen its reach, and stops when revoked', async () => {
    const userKey = newAgentKey()
    const sub = await h.createSubOrganization({
      keys: [testKey('SIGNATURE_SCHEME_TK_API_P256', hexToBytes(userKey.apiPrivateKey))],
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
    })
    const organizationId = sub.organizationId
    h.clock.advance(1)
    const savings = resultOf(
      'create_wallet',
      await h.submit(
        'create_wallet',
        { walletName: 'Savings', accounts: [ETHEREUM_ACCOUNT] },
        { as: sub.keys[0]!, organizationId },
      ),
    )
    const owner = clientOf(baseUrl, userKey)
    const key = newAgentKey()
    const granted = await grantAgent(owner, {
      organizationId,
      walletId: sub.walletId!,
      agentName: 'trading bot',
      agentPublicKey: key.apiPublicKey,
      caip2: 'eip155:1',
      allowancePerDay: '1000',
      onlyTo: MERCHANT,
    })
    const agent = clientOf(baseUrl, key)
    const from = sub.addresses![0]!
    // Transfers that pay no fee: the allowance counts their value alone.
    const pay = (
      value: bigint,
      nonce: number,
      more: { from?: string; to?: string; maxFeePerGas?: bigint } = {},
    ) =>
      agentTransfer(agent, {
        organizationId,
        from,
        to: MERCHANT,
        value,
        chainId: 1,
        nonce,
        maxFeePerGas: 0n,
        ...more,
      })

    // Within the allowance: signed.
    expect(await pay(600n, 0)).toEqual({ signedTransaction: expect.stringMatching(/^02/) })
    // Over it: the typed refusal (429 RESOURCE_EXHAUSTED) naming what remains.
    const over = await pay(600n, 1)
    expect(over).toMatchObject({
      code: 8,
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
      details: { spendingLimitId: granted.spendingLimitId, used: '600', remaining: '400' },
    })
    expect(await pay(400n, 2)).toHaveProperty('signedTransaction')
    // A fee it would pay counts too: 21,000 gas at 1 wei, with nothing sent, is over what is left.
    expect(await pay(0n, 3, { maxFeePerGas: 1n })).toMatchObject({
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
      details: { used: '1000', remaining: '0', requested: '21000' },
    })

    // Another wallet, another recipient: no policy allows it.
    const otherWallet = await pay(1n, 3, { from: savings.addresses[0] })
    expect(otherWallet).toMatchObject({ errorCode: 'PERMISSION_DENIED' })
    expect(await pay(1n, 3, { to: '0x000000000000000000000000000000000000dead' })).toMatchObject({
      errorCode: 'PERMISSION_DENIED',
    })
    const now = () => String(Date.now())
    // It cannot raise its own limit, create another key, or export the wallet.
    const raise = await refused(
      agent.request('/public/v1/submit/latchkey_update_spending_limit', {
        type: 'ACTIVITY_TYPE_LATCHKEY_UPDATE_SPENDING_LIMIT',
        timestampMs: now(),
        organizationId,
        parameters: { spendingLimitId: granted.spendingLimitId, amount: String(10n ** 30n) },
      }),
    )
    expect(raise.errorCode).toBe('PERMISSION_DENIED')
    const newKey = await refused(
      agent.createApiKeys({
        type: 'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
        timestampMs: now(),
        organizationId,
        parameters: {
          userId: granted.agentUserId,
          apiKeys: [
            { apiKeyName: 'spare', publicKey: newAgentKey().apiPublicKey, curveType: 'API_KEY_CURVE_P256' },
          ],
        },
      }),
    )
    expect(newKey.errorCode).toBe('PERMISSION_DENIED')
    const exported = await refused(
      agent.exportWallet({
        type: 'ACTIVITY_TYPE_EXPORT_WALLET',
        timestampMs: now(),
        organizationId,
        parameters: { walletId: sub.walletId!, targetPublicKey: newAgentKey().apiPublicKey },
      }),
    )
    expect(exported.errorCode).toBe('PERMISSION_DENIED')
    const limits = await h.query('latchkey_list_spending_limits', {}, { as: sub.keys[0]!, organizationId })
    expect(limits.body.spendingLimits[0]).toMatchObject({ amount: '1000', used: '1000' })

    // The user revokes the key: the agent's next request is not even authenticated.
    await revokeAgent(owner, { organizationId, ...granted })
    const after = await pay(1n, 4)
    expect(after).toMatchObject({ errorCode: 'PUBLIC_KEY_NOT_FOUND' })
  })

  it("signs on its allowance's chain only, and only plain transfers: a limit counts nothing elsewhere", async () => {
    const { organizationId, owner, walletId, from } = await userWithWallet()
    const key = newAgentKey()
    await grantAgent(owner, {
      organizationId,
      walletId,
      agentName: 'bot',
      agentPublicKey: key.apiPublicKey,
      caip2: 'eip155:1',
      allowancePerDay: '1000',
      onlyTo: MERCHANT,
    })
    const agent = clientOf(baseUrl, key)
    const pay = (value: bigint, chainId: number, nonce = 0) =>
      agentTransfer(agent, { organizationId, from, to: MERCHANT, value, chainId, nonce, maxFeePerGas: 0n })
    // Controls, on the allowance's own chain: within it signed, over it the limit's 429.
    expect(await pay(1n, 1)).toHaveProperty('signedTransaction')
    expect(await pay(100n * ETH, 1, 1)).toMatchObject({ errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    // The same address holds ETH on Optimism, Base, Arbitrum…: no limit counts those, so the
    // policy does not allow them (before, each 100 ETH was signed).
    for (const chainId of [10, 8453, 42161]) {
      expect(await pay(100n * ETH, chainId), `chain ${chainId}`).toMatchObject({
        errorCode: 'PERMISSION_DENIED',
      })
    }
    // Calldata (a token's transfer, were MERCHANT a token contract) moves what a native limit does
    // not count: refused by the policy, even with no value.
    const call = serializeTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: 1,
      gas: 60_000n,
      maxFeePerGas: 0n,
      maxPriorityFeePerGas: 0n,
      to: MERCHANT,
      value: 0n,
      data: `0xa9059cbb${'00'.repeat(12)}${'ab'.repeat(20)}${(10n ** 24n).toString(16).padStart(64, '0')}`,
    })
    const signCall = await agent
      .signTransaction({
        type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
        timestampMs: String(Date.now()),
        organizationId,
        parameters: { signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: call },
      })
      .then(
        () => 'signed',
        (error: unknown) => refusalOf(error)?.errorCode,
      )
    expect(signCall).toBe('PERMISSION_DENIED')
  })

  it("another agent's request that matches this agent's policy is not completed by this agent's vote", async () => {
    const { organizationId, owner, walletId, from } = await userWithWallet()
    // Two allowances on one wallet: 1,000 wei a day on mainnet, and 1,000 wei a day on Base.
    const [keyA, keyB] = [newAgentKey(), newAgentKey()]
    for (const [key, caip2] of [
      [keyA, 'eip155:1'],
      [keyB, 'eip155:8453'],
    ] as const)
      await grantAgent(owner, {
        organizationId,
        walletId,
        agentName: `bot on ${caip2}`,
        agentPublicKey: key.apiPublicKey,
        caip2,
        allowancePerDay: '1000',
      })
    const [agentA, agentB] = [clientOf(baseUrl, keyA), clientOf(baseUrl, keyB)]
    // Controls: B within its allowance on Base is signed.
    expect(
      await agentTransfer(agentB, {
        organizationId,
        from,
        to: MERCHANT,
        value: 1n,
        chainId: 8453,
        nonce: 0,
        maxFeePerGas: 0n,
      }),
    ).toHaveProperty('signedTransaction')
    // B asks for 100 ETH on mainnet: B's limit (Base) counts nothing there, and A's policy matches
    // it (the wallet, chain 1, no calldata).
    const unsignedTransaction = serializeTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: 0,
      gas: 21_000n,
      maxFeePerGas: 0n,
      maxPriorityFeePerGas: 0n,
      to: MERCHANT,
      value: 100n * ETH,
    })
    const asked = await agentB
      .signTransaction({
        type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
        timestampMs: String(Date.now()),
        organizationId,
        parameters: { signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction },
      })
      .then(
        (reply) => reply.activity,
        (error: unknown) => refusalOf(error)?.errorCode,
      )
    // It waits for a vote (A's policy matches all but its consensus), and A's vote does not
    // complete it: with approvers.any it did, and 100 ETH no limit counted was signed.
    expect(asked).toMatchObject({ status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED' })
    const { id, fingerprint } = asked as { id: string; fingerprint: string }
    await agentA
      .approveActivity({
        type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
        timestampMs: String(Date.now()),
        organizationId,
        parameters: { fingerprint },
      })
      .catch(() => undefined)
    const after = (await agentB.getActivity({ organizationId, activityId: id })).activity
    expect(after.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    expect(after.result?.signTransactionResult?.signedTransaction).toBeUndefined()
  })

  it('a grant whose limit step fails is undone: the key signs nothing and nothing is left', async () => {
    const { organizationId, owner, walletId, from, made } = await userWithWallet()
    const before = await made()
    const key = newAgentKey()
    const grant = {
      organizationId,
      walletId,
      agentName: 'bot',
      agentPublicKey: key.apiPublicKey,
      caip2: 'eip155:1',
      allowancePerDay: '0.01', // meant "0.01 ETH": not a wei integer, refused by the service
      onlyTo: MERCHANT,
    }
    await expect(grantAgent(owner, grant)).rejects.toMatchObject({ code: 3 })
    const agent = clientOf(baseUrl, key)
    const pay = (value: bigint) =>
      agentTransfer(agent, {
        organizationId,
        from,
        to: MERCHANT,
        value,
        chainId: 1,
        nonce: 0,
        maxFeePerGas: 0n,
      })
    // Before, the policy was made first and outlived the failed limit: 1,000 ETH was signed.
    expect(await pay(1_000n * ETH)).toMatchObject({ errorCode: 'PUBLIC_KEY_NOT_FOUND' })
    expect(await made()).toEqual(before)
    // Control: the same grant with an amount in wei works, with the same key.
    const granted = await grantAgent(owner, { ...grant, allowancePerDay: '1000' })
    expect(await pay(1_000n * ETH)).toMatchObject({ errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    expect(await pay(1n)).toHaveProperty('signedTransaction')
    await revokeAgent(owner, { organizationId, ...granted })
  })

  it('a grant whose policy step fails is undone: its user, key and limit are deleted', async () => {
    const { organizationId, owner, walletId, from, made } = await userWithWallet()
    const before = await made()
    const key = newAgentKey()
    // The network fails at the last step, after the user and the limit were made.
    const failingPolicy = new Proxy(owner, {
      get: (target, name, receiver) =>
        name === 'createPolicy'
          ? () => Promise.reject(new Error('socket hang up'))
          : Reflect.get(target, name, receiver),
    })
    await expect(
      grantAgent(failingPolicy, {
        organizationId,
        walletId,
        agentName: 'bot',
        agentPublicKey: key.apiPublicKey,
        caip2: 'eip155:1',
        allowancePerDay: '1000',
      }),
    ).rejects.toThrow('socket hang up')
    expect(await made()).toEqual(before)
    const outcome = await agentTransfer(clientOf(baseUrl, key), {
      organizationId,
      from,
      to: MERCHANT,
      value: 1n,
      chainId: 1,
      nonce: 0,
      maxFeePerGas: 0n,
    })
    expect(outcome).toMatchObject({ errorCode: 'PUBLIC_KEY_NOT_FOUND' })
  })

  it('a recipient, wallet id or chain that would rewrite the policy condition is refused before anything is made', async () => {
    const { organizationId, owner, walletId, made } = await userWithWallet()
    const grant = {
      organizationId,
      walletId,
      agentName: 'bot',
      caip2: 'eip155:1',
      allowancePerDay: '1000',
      onlyTo: MERCHANT,
    }
    // Control: the plain grant's agent may not export the wallet.
    const plainKey = newAgentKey()
    await grantAgent(owner, { ...grant, agentName: 'plain bot', agentPublicKey: plainKey.apiPublicKey })
    expect(await exportOutcome(clientOf(baseUrl, plainKey), organizationId, walletId)).toBe(
      'refused: PERMISSION_DENIED',
    )
    const before = await made()
    const key = newAgentKey()
    for (const [field, change] of [
      ['onlyTo', { onlyTo: INJECTED }],
      ['walletId', { walletId: `${walletId}' || true || 'x` }],
      ['caip2', { caip2: 'eip155:1 || true' }],
      ['caip2', { caip2: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }],
    ] as const) {
      const refused = await grantAgent(owner, { ...grant, ...change, agentPublicKey: key.apiPublicKey }).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(refused, field).toMatchObject({ name: 'InvalidGrantError', field })
    }
    expect(await made()).toEqual(before)
    // Before, the injected recipient made an ALLOW of everything: this agent exported the wallet.
    expect(await exportOutcome(clientOf(baseUrl, key), organizationId, walletId)).toBe(
      'refused: PUBLIC_KEY_NOT_FOUND',
    )
  })
})

describe('delegated access (examples/delegated-access.ts)', () => {
  it('refuses a recipient, chain, amount or user id that would rewrite the condition', () => {
    const userId = '0b5f8a0e-3c1a-4a57-9f43-1d9bd0e1a7c2'
    // Control: a plain address, checksummed or not, is one lower-case literal of the condition.
    const [allow, deny] = delegationPolicies(userId, {
      recipient: '0x000000000000000000000000000000000000BEEF',
      chainId: 31337,
      maxWei: 10n,
      maxFeePerGas: 7n,
    })
    expect(allow!.condition).toBe(
      "activity.resource == 'WALLET' && activity.action == 'SIGN'" +
        ` && eth.tx.chain_id == 31337 && eth.tx.to == '${MERCHANT}' && eth.tx.data == '0x'` +
        " && eth.tx.type == 'eip1559' && eth.tx.gas <= 21000 && eth.tx.max_fee_per_gas <= 7",
    )
    expect(deny!.condition).toBe("activity.action == 'SIGN' && eth.tx.value > 10")
    const grant = { recipient: MERCHANT, chainId: 31337, maxFeePerGas: 7n }
    expect(() => delegationPolicies(userId, { ...grant, recipient: INJECTED })).toThrow(/^recipient:/)
    expect(() => delegationPolicies(`${userId}') || true || ('`, grant)).toThrow(/^backendUserId:/)
    expect(() => delegationPolicies(userId, { ...grant, maxWei: '1 || true' as unknown as bigint })).toThrow(
      /^maxWei:/,
    )
    expect(() => delegationPolicies(userId, { ...grant, chainId: '1 || true' as unknown as number })).toThrow(
      /^chainId:/,
    )
    expect(() =>
      delegationPolicies(userId, { ...grant, maxFeePerGas: '1 || true' as unknown as bigint }),
    ).toThrow(/^maxFeePerGas:/)
    expect(() => delegationPolicies(userId, { ...grant, maxGas: '1 || true' as unknown as bigint })).toThrow(
      /^maxGas:/,
    )
  })

  it('the back end signs ETH to the recipient on the granted chain, and nothing else: not on another chain, not a call of the recipient, not a legacy transfer naming no chain, not a fee above the grant', async () => {
    const root = testKey()
    const backend = testKey()
    const sub = await h.createSubOrganization({
      keys: [root],
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
    })
    const asRoot = { organizationId: sub.organizationId, as: root }
    h.clock.advance(1)
    const { userIds } = resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'App back end',
              apiKeys: [backend.apiKey('back end')],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        asRoot,
      ),
    )
    const grant = { recipient: MERCHANT, chainId: 8453, maxWei: ETH, maxFeePerGas: 10n ** 10n }
    const [allow, deny] = delegationPolicies(userIds[0]!, grant)
    h.clock.advance(1)
    resultOf('create_policies', await h.submit('create_policies', { policies: [allow!, deny!] }, asRoot))
    // A token's contract as the recipient: a call of it is `transfer(thief, 10^24)`.
    const drain =
      `0xa9059cbb${'ab'.repeat(20).padStart(64, '0')}${(10n ** 24n).toString(16).padStart(64, '0')}` as const
    const sign = async (transaction: Parameters<typeof serializeTransaction>[0]) => {
      h.clock.advance(1)
      const reply = await h.submit(
        'sign_transaction',
        {
          signWith: sub.addresses![0]!,
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction: serializeTransaction(transaction).slice(2),
        },
        { organizationId: sub.organizationId, as: backend },
      )
      return reply.status === 200 ? 'signed' : (reply.body.details?.outcome ?? reply.body.code)
    }
    const transfer = {
      type: 'eip1559',
      chainId: 8453,
      nonce: 0,
      gas: 21_000n,
      maxFeePerGas: 10n ** 9n,
      maxPriorityFeePerGas: 1n,
      to: MERCHANT,
      value: ETH / 100n,
    } as const
    // Control: the transfer it was granted.
    expect(await sign(transfer)).toBe('signed')
    expect(await sign({ ...transfer, chainId: 1 })).toBe('OUTCOME_DENY_IMPLICIT')
    expect(await sign({ ...transfer, value: 0n, data: drain })).toBe('OUTCOME_DENY_IMPLICIT')
    expect(
      await sign({
        type: 'legacy',
        nonce: 0,
        gas: 21_000n,
        gasPrice: 10n ** 9n,
        to: MERCHANT,
        value: ETH / 100n,
      }),
    ).toBe('OUTCOME_DENY_IMPLICIT')
    // 1 wei whose fee (100,000 gwei a gas: 2.1 ETH, over the 1 ETH maxWei) goes to the block's
    // producer, who may be the back end or pay it; or a gas limit a contract recipient could burn.
    const feeDrain = { ...transfer, value: 1n, maxFeePerGas: 10n ** 14n, maxPriorityFeePerGas: 10n ** 14n }
    expect(await sign(feeDrain)).toBe('OUTCOME_DENY_IMPLICIT')
    expect(await sign({ ...transfer, gas: 1_000_000n })).toBe('OUTCOME_DENY_IMPLICIT')
    // Control: the ALLOW without its type and fee clauses (the recipe before) signs it.
    h.clock.advance(1)
    resultOf(
      'create_policies',
      await h.submit(
        'create_policies',
        {
          policies: [
            {
              ...allow!,
              policyName: 'The recipe before',
              condition: allow!.condition!.replace(/ && eth\.tx\.type == .*$/, ''),
            },
          ],
        },
        asRoot,
      ),
    )
    expect(await sign(feeDrain)).toBe('signed')
  })
})
