import type { Activity, SpendingLimitAsset, SpendingLimitPeriod } from '@latchkey/protocol'
import { LatchkeyError, MfaRequiredError, thenOrResume } from '../../errors.ts'
import { query, submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

/** Marks the policies `grantAgentAllowance` creates, so `revokeAgentAllowance` finds them. */
export const AGENT_POLICY_NOTE = 'latchkey-agent-allowance'

export interface GrantAgentAllowanceParameters extends ActionOptions {
  /** Shown to the user; also the agent user's and the limit's name. */
  agentName: string
  /** The agent's P-256 public key, compressed, hex (66 characters). Its private key never reaches the kit. */
  publicKey: string
  /** The chain the allowance is on, e.g. `eip155:8453`. */
  caip2: string
  /** The cap per period, a decimal string of the asset's smallest unit (wei for ETH). */
  amount: string
  period: SpendingLimitPeriod
  /** @default the chain's native unit */
  asset?: SpendingLimitAsset | undefined
  /** The only addresses the asset may go to; any when absent or empty. */
  allowedDestinations?: string[] | undefined
  /**
   * How to show an ERC-20 `asset`'s amounts (the service knows only its contract): kept with the
   * agent's policy, read back by `agentOfPolicy`. `symbol`: 1–11 letters, digits, `.`, `$`, `_`, `-`.
   */
  token?: AgentToken | undefined
}

/** An ERC-20 allowance's token, as the user knows it: `USDC`, 6 decimals. */
export interface AgentToken {
  symbol: string
  decimals: number
}

const SYMBOL = /^[A-Za-z0-9.$_-]{1,11}$/

/**
 * The agent allowance a policy made by `grantAgentAllowance` belongs to (its notes), or undefined
 * for any other policy: only a limit named by such a policy is an agent's.
 */
export function agentOfPolicy(
  notes: string,
): { userId: string; spendingLimitId: string; token?: AgentToken } | undefined {
  const [mark, userId, spendingLimitId, symbol, decimals] = notes.split(':')
  if (mark !== AGENT_POLICY_NOTE || !userId || !spendingLimitId) return undefined
  const token =
    symbol && SYMBOL.test(symbol) && /^\d{1,2}$/.test(decimals ?? '')
      ? { symbol, decimals: Number(decimals) }
      : undefined
  return { userId, spendingLimitId, ...(token ? { token } : {}) }
}

export interface GrantAgentAllowanceReturnType {
  /** The agent's own, non-root user, which holds its key. */
  userId: string
  apiKeyId: string
  spendingLimitId: string
  /** The policy that lets the agent sign and do nothing else. */
  policyId: string
}

const COMPRESSED_P256 = /^0[23][0-9a-f]{64}$/i

/**
 * Gives an agent (an AI agent, a back end) an allowance: a non-root user of the organization
 * holding the agent's API key, a spending limit scoped to that key, and a policy that lets that
 * user sign and nothing else. The key can never raise its own limit, create keys or export.
 *
 * The key is added first and allowed to sign last, so there is no moment at which it could sign
 * without its limit. A step the service refuses (a policy name already taken, a limit over the
 * organization's count) undoes the ones before it: the agent's user, with its key, and its limit
 * are deleted, and the refusal is thrown. Only a grant cut off half-way (the page closed, the
 * network gone, or a second-factor challenge never completed) leaves a key that can do nothing: `revokeAgentAllowance` cannot list it, since no
 * policy names it; `delete_users` removes it.
 */
export async function grantAgentAllowance(
  client: Latchkey,
  parameters: GrantAgentAllowanceParameters,
): Promise<GrantAgentAllowanceReturnType> {
  const [grant, options] = splitOptions(parameters)
  if (
    grant.token &&
    (!SYMBOL.test(grant.token.symbol) ||
      !Number.isInteger(grant.token.decimals) ||
      grant.token.decimals < 0 ||
      grant.token.decimals > 36)
  )
    throw new LatchkeyError('The token needs a symbol (1–11 letters or digits) and 0–36 decimals', {
      code: 'FIELD_INVALID',
      details: { field: 'token' },
    })
  const publicKey = grant.publicKey.trim().toLowerCase().replace(/^0x/, '')
  if (!COMPRESSED_P256.test(publicKey))
    throw new LatchkeyError('The agent key must be a compressed P-256 public key (66 hex characters)', {
      code: 'FIELD_INVALID',
      details: { field: 'publicKey' },
    })
  const created = submit(
    client,
    'create_users',
    {
      users: [
        {
          userName: grant.agentName,
          apiKeys: [{ apiKeyName: grant.agentName, publicKey, curveType: 'API_KEY_CURVE_P256' }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    },
    options,
  )
  // Under an MFA policy a step waits for the user's second factor: the MfaRequiredError it
  // throws resumes into the rest of the grant, so completing it (`completeMfa`, `<StepUp/>`)
  // goes on to the next step, which may wait again (a new MfaRequiredError, resuming likewise).
  return thenOrResume(created, async (created) => {
    const userId = created.result.userIds[0] as string
    const organizationId = created.activity.organizationId
    let spendingLimitId: string | undefined
    // The key first, as a revoke does: once it is gone nothing it was given matters. Not under
    // the caller's signal: an aborted grant is undone too.
    const undo = async () => {
      const quiet = { ...options, signal: undefined }
      await submit(client, 'delete_users', { userIds: [userId] }, quiet).catch(() => undefined)
      if (spendingLimitId)
        await submit(client, 'latchkey_delete_spending_limit', { spendingLimitId }, quiet).catch(
          () => undefined,
        )
    }
    return undoOnRefusal(
      allowAgent(client, grant, options, { userId, publicKey, organizationId }),
      undo,
      (allowed) => {
        spendingLimitId = allowed.spendingLimitId
        return undoOnRefusal(
          policyFor(client, grant, options, { userId, spendingLimitId }),
          undo,
          (policyId) => ({
            userId,
            apiKeyId: allowed.apiKeyId,
            spendingLimitId: allowed.spendingLimitId,
            policyId,
          }),
        )
      },
    )
  })
}

/**
 * `then(await step)`, undoing the grant when the service refuses the step (also once a step that
 * waited for a second factor is completed and then refused). A wait is no refusal: its
 * MfaRequiredError is thrown again, resuming into `then`; nothing is undone.
 */
async function undoOnRefusal<T, U>(
  step: Promise<T>,
  undo: () => Promise<void>,
  then: (value: T) => U | Promise<U>,
): Promise<U> {
  let value: T
  try {
    value = await step
  } catch (error) {
    if (!(error instanceof MfaRequiredError)) {
      await undo()
      throw error
    }
    const held = error as MfaRequiredError<T>
    const resume = async (activity: Activity) => {
      try {
        return await held.resume(activity)
      } catch (refusal) {
        if (!(refusal instanceof MfaRequiredError)) await undo()
        throw refusal
      }
    }
    throw new MfaRequiredError(held.activity, held.steps, resume).map(then)
  }
  return then(value)
}

type Grant = Omit<GrantAgentAllowanceParameters, keyof ActionOptions>

/** The agent's key read back, and its limit. */
async function allowAgent(
  client: Latchkey,
  grant: Grant,
  options: ActionOptions,
  { userId, publicKey, organizationId }: { userId: string; publicKey: string; organizationId: string },
): Promise<{ apiKeyId: string; spendingLimitId: string }> {
  const { users } = await query(client, 'list_users', { organizationId }, options)
  const apiKeyId = users
    .find((user) => user.userId === userId)
    ?.apiKeys.find((key) => key.credential.publicKey.toLowerCase() === publicKey)?.apiKeyId
  if (!apiKeyId)
    throw new LatchkeyError('The agent key was added but cannot be read back', { code: 'INTERNAL' })
  // Read through a wait for a second factor too (its MfaRequiredError resumes to the same).
  return thenOrResume(
    submit(
      client,
      'latchkey_create_spending_limit',
      {
        spendingLimitName: grant.agentName,
        scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: grant.period },
        asset: grant.asset ?? { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: grant.caip2 },
        amount: grant.amount,
        allowedDestinations: grant.allowedDestinations ?? [],
      },
      options,
    ),
    ({ result }) => ({ apiKeyId, spendingLimitId: result.spendingLimitId }),
  )
}

/** The policy that lets the agent's user sign and send, and names its limit (`agentOfPolicy`). */
async function policyFor(
  client: Latchkey,
  grant: Grant,
  options: ActionOptions,
  { userId, spendingLimitId }: { userId: string; spendingLimitId: string },
): Promise<string> {
  return thenOrResume(
    submit(
      client,
      'create_policy',
      {
        policyName: `${grant.agentName}: may sign and send within its allowance`,
        effect: 'EFFECT_ALLOW',
        // Signing, and sending (the service signs and broadcasts): both are spends its limit counts.
        condition: "activity.resource == 'WALLET' && activity.action in ['SIGN', 'SEND']",
        consensus: `approvers.any(user, user.id == '${userId}')`,
        notes:
          `${AGENT_POLICY_NOTE}:${userId}:${spendingLimitId}` +
          (grant.token ? `:${grant.token.symbol}:${grant.token.decimals}` : ''),
      },
      options,
    ),
    ({ result }) => result.policyId,
  )
}
