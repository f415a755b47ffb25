import { LatchkeyError, thenOrResume } from '../../errors.ts'
import { requireSession } from '../../session/sessions.ts'
import { query, submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { AGENT_POLICY_NOTE } from './grantAgentAllowance.ts'

export interface RevokeAgentAllowanceParameters extends ActionOptions {
  /** The agent's limit, as `grantAgentAllowance` returned it or `getSpendingLimits` lists it. */
  spendingLimitId: string
}

export interface RevokeAgentAllowanceReturnType {
  spendingLimitId: string
  /** The agent's user, deleted with its key; absent when no user held the limit's key any more. */
  userId?: string
  policyIds: string[]
}

/**
 * Takes an allowance back: deletes the agent's user (and with it its key, so it cannot sign from
 * this moment), the policy that let it sign, and its spending limit. What it signed before stays
 * signed. Under an MFA policy it waits for a code twice, as the grant does: at deleting the user
 * (the agent's key signs until then) and at deleting the policy (`MfaRequiredError`, whose
 * completion resumes into the rest). A revoke interrupted half-way (or whose second-factor
 * challenge is not completed) can be run again.
 */
export async function revokeAgentAllowance(
  client: Latchkey,
  parameters: RevokeAgentAllowanceParameters,
): Promise<RevokeAgentAllowanceReturnType> {
  const [{ spendingLimitId }, options] = splitOptions(parameters)
  await client.hydrate()
  const organizationId = options.organizationId ?? requireSession(client, options.sessionId).organizationId
  const { spendingLimits } = await query(client, 'latchkey_list_spending_limits', { organizationId }, options)
  const limit = spendingLimits.find((entry) => entry.spendingLimitId === spendingLimitId)
  if (limit?.scope.type !== 'SPENDING_LIMIT_SCOPE_API_KEY')
    throw new LatchkeyError(`No agent allowance ${spendingLimitId} in this organization`, {
      code: 'SPENDING_LIMIT_NOT_FOUND',
      details: { field: 'spendingLimitId' },
    })
  const apiKeyId = limit.scope.apiKeyId
  const { users } = await query(client, 'list_users', { organizationId }, options)
  const userId = users.find((user) => user.apiKeys.some((key) => key.apiKeyId === apiKeyId))?.userId
  // The key first: once it is gone the agent can sign nothing, whatever happens next. Under an
  // MFA policy deleting a user waits for the user's second factor: its MfaRequiredError resumes
  // into the rest of the revoke, which may wait once more, at delete_policies (the agent's key is
  // gone by then).
  const removed = userId ? submit(client, 'delete_users', { userIds: [userId] }, options) : undefined
  return thenOrResume(Promise.resolve(removed), async () => {
    const { policies } = await query(client, 'list_policies', { organizationId }, options)
    const policyIds = policies
      .filter(
        (policy) =>
          policy.notes.startsWith(`${AGENT_POLICY_NOTE}:`) && policy.notes.split(':')[2] === spendingLimitId,
      )
      .map((policy) => policy.policyId)
    const deleted =
      policyIds.length > 0 ? submit(client, 'delete_policies', { policyIds }, options) : undefined
    return thenOrResume(Promise.resolve(deleted), async () => {
      await submit(client, 'latchkey_delete_spending_limit', { spendingLimitId }, options)
      return { spendingLimitId, ...(userId ? { userId } : {}), policyIds }
    })
  })
}
