// The set-up the tests of an agent signing under a spending limit while its grant changes share:
// the kit's agent grant (docs/agents.md) in a fresh sub-organization, the revoke's steps, and the
// signing request and owner submit they build on.
import { expect } from 'vitest'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, type TestKey, testKey } from '../../src/testing/harness.ts'
import { unsignedTransfer } from '../../src/testing/unsignedTransfer.ts'

/** Each signing its own transaction, across every test that signs through here. */
let nonce = 0

/** The arguments of a `sign_transaction` of `value` wei on chain 1 from `signWith`, as `as` (not yet sent). */
export function signTransaction(
  signWith: string,
  as: TestKey,
  organizationId: string,
  value: bigint,
): Parameters<Harness['submit']> {
  return [
    'sign_transaction',
    {
      signWith,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: unsignedTransfer({ value, nonce: nonce++, maxFeePerGas: 0n }),
    } as never,
    { as, organizationId },
  ]
}

/** {@link signTransaction} after moving `h`'s clock on 1 ms (each activity its own timestamp). */
export function signRequest(
  h: Harness,
  signWith: string,
  as: TestKey,
  organizationId: string,
  value: bigint,
): Parameters<Harness['submit']> {
  h.clock.advance(1)
  return signTransaction(signWith, as, organizationId, value)
}

/**
 * Submits `path` as `as` on `h`, its clock moved on 1 ms, and expects a 200 whose activity has
 * `status` (`null`: the HTTP status only).
 */
export async function submitOk(
  h: Harness,
  path: Parameters<Harness['submit']>[0],
  parameters: unknown,
  as: TestKey,
  organizationId: string,
  status: string | null = 'ACTIVITY_STATUS_COMPLETED',
) {
  h.clock.advance(1)
  const reply = await h.submit(path, parameters as never, { as, organizationId })
  expect(reply.status, `${path}: ${JSON.stringify(reply.body)}`).toBe(200)
  if (status !== null) expect(reply.body.activity.status, path).toBe(status)
  return reply
}

/** The `create_users` parameters of one non-root user `agent` holding `key` (API key `agent`) and nothing else. */
export function agentUser(key: TestKey) {
  return {
    users: [
      {
        userName: 'agent',
        apiKeys: [key.apiKey('agent')],
        authenticators: [],
        oauthProviders: [],
        userTags: [],
      },
    ],
  }
}

export interface AgentGrantParameters {
  /** The allowance: wei a rolling day, native on `eip155:1`. */
  allowance: bigint
  /**
   * The limit's name and whose it is: the agent's API key (the kit's grant) or the agent's user.
   * @default { spendingLimitName: 'agent allowance', scope: 'apiKey' }
   */
  limit?: { spendingLimitName: string; scope: 'apiKey' | 'user' }
  /**
   * The ALLOW's name and condition.
   * @default the kit's: 'agent pays on chain 1', plain transfers on chain 1 from the sub-organization's wallet
   */
  policy?: { policyName: string; condition: string }
  /**
   * Puts the agent in a user tag `agents` that the ALLOW's consensus requires too (made before the limit).
   * @default false
   */
  tagged?: boolean
  /**
   * Whether the owner's activities must complete, not only answer 200.
   * @default true
   */
  completed?: boolean
}

/**
 * A sub-organization (its owner the one root user, one Ethereum wallet) whose non-root agent user
 * holds one API key, under a spending limit and then an ALLOW for the agent's own requests, in the
 * kit's order; made on `h`.
 */
export async function agentGrant(h: Harness, parameters: AgentGrantParameters) {
  const { allowance, tagged = false, completed = true } = parameters
  const limit = parameters.limit ?? { spendingLimitName: 'agent allowance', scope: 'apiKey' }
  const sub = await h.createSubOrganization({ wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] } })
  const owner = sub.keys[0]!
  const organizationId = sub.organizationId
  const address = sub.addresses![0]!
  const asOwner = (path: Parameters<Harness['submit']>[0], parameters: unknown) =>
    submitOk(h, path, parameters, owner, organizationId, completed ? 'ACTIVITY_STATUS_COMPLETED' : null)
  const agent = testKey()
  const { userIds } = resultOf('create_users', await asOwner('create_users', agentUser(agent)))
  const agentUserId = userIds[0] as string
  const keys = await h.query('get_api_keys', { userId: agentUserId }, { as: owner, organizationId })
  const apiKeyId = keys.body.apiKeys[0].apiKeyId as string
  const tagId = tagged
    ? (resultOf(
        'create_user_tag',
        await asOwner('create_user_tag', { userTagName: 'agents', userIds: [agentUserId] }),
      ).userTagId as string)
    : undefined
  // The limit before the policy, as the kit grants it.
  const { spendingLimitId } = resultOf(
    'latchkey_create_spending_limit',
    await asOwner('latchkey_create_spending_limit', {
      spendingLimitName: limit.spendingLimitName,
      scope:
        limit.scope === 'apiKey'
          ? { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId }
          : { type: 'SPENDING_LIMIT_SCOPE_USER', userId: agentUserId },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
      amount: String(allowance),
    }),
  )
  const policy = parameters.policy ?? {
    policyName: 'agent pays on chain 1',
    condition: `activity.resource == 'WALLET' && activity.action == 'SIGN' && wallet.id == '${sub.walletId}' && eth.tx.chain_id == 1 && eth.tx.data == '0x'`,
  }
  const { policyId } = resultOf(
    'create_policy',
    await asOwner('create_policy', {
      ...policy,
      effect: 'EFFECT_ALLOW',
      consensus:
        tagId === undefined
          ? `approvers.all(user, user.id == '${agentUserId}')`
          : `approvers.all(user, user.id == '${agentUserId}' && '${tagId}' in user.tags)`,
      notes: '',
    }),
  )
  const steps = {
    user: ['delete_users', { userIds: [agentUserId] }],
    policy: ['delete_policies', { policyIds: [policyId] }],
    limit: ['latchkey_delete_spending_limit', { spendingLimitId }],
    key: ['delete_api_keys', { userId: agentUserId, apiKeyIds: [apiKeyId] }],
    deny: [
      'create_policy',
      {
        policyName: 'no more signing',
        effect: 'EFFECT_DENY',
        condition: `activity.resource == 'WALLET' && activity.action == 'SIGN'`,
        notes: '',
      },
    ],
    tag: ['update_user_tag', { userTagId: tagId, addUserIds: [], removeUserIds: [agentUserId] }],
  } as const
  /**
   * The named steps (none named: the kit's revokeAgentAllowance, no MFA), the kit's own in its
   * order (user, policy, limit), then the others (key, deny, tag; `tag` only when `tagged`).
   */
  const revoke = async (...only: (keyof typeof steps)[]) => {
    for (const step of ['user', 'policy', 'limit'] as const)
      if (only.length === 0 || only.includes(step)) await asOwner(steps[step][0], steps[step][1])
    for (const step of ['key', 'deny', 'tag'] as const)
      if (only.includes(step)) {
        if (step === 'tag' && tagId === undefined)
          throw new Error('agentGrant: no tag to take the agent out of')
        await asOwner(steps[step][0], steps[step][1])
      }
  }
  /** A signing of `value` wei from the wallet, sent to `on` (the agent's unless `as` is given). */
  const sign = (on: Harness, value: bigint, as: TestKey = agent) =>
    signRequest(on, address, as, organizationId, value)
  /** What each of the sub-organization's limits has counted, as the owner lists them on `h`. */
  const used = async () => {
    const limits = await h.query('latchkey_list_spending_limits', {}, { as: owner, organizationId })
    return (limits.body.spendingLimits as { used: string }[]).map((limit) => limit.used)
  }
  return { sub, owner, organizationId, address, agent, agentUserId, apiKeyId, asOwner, revoke, sign, used }
}
