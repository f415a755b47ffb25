import type { AuthenticationMethod, MfaPolicy, RequiredAuthenticationMethod } from '@latchkey/protocol'
import { NotFoundError } from '../kernel/base/errors.ts'
import { timestampOf } from '../kernel/base/ids.ts'
import { defineQuery, type QueryContext } from '../kernel/registry.ts'
import type { MfaPolicyRow } from '../kernel/store/model.ts'
import { policiesOfUser } from './mfaGate.ts'

const steps = (row: { steps: MfaPolicyRow['steps'] }) => row.steps as RequiredAuthenticationMethod[]

/** The published `v1MfaPolicy`. */
export const renderMfaPolicy = (row: MfaPolicyRow): MfaPolicy => ({
  mfaPolicyId: row.id,
  mfaPolicyName: row.name,
  condition: row.condition,
  requiredAuthenticationMethods: steps(row),
  order: row.order,
  ...(row.notes ? { notes: row.notes } : {}),
  createdAt: timestampOf(row.createdAt),
  updatedAt: timestampOf(row.updatedAt),
})

async function userIn(ctx: QueryContext, userId: string): Promise<void> {
  const user = await ctx.store.get('users', userId)
  if (!user || user.organizationId !== ctx.organization.id)
    throw new NotFoundError({
      code: 'USER_NOT_FOUND',
      field: 'userId',
      message: `no user ${userId} in organization ${ctx.organization.id}`,
    })
}

export const getMfaPolicies = defineQuery('get_mfa_policies', {
  parse: (r) => ({ userId: r.string('userId', { max: 200 }) }),
  run: async (ctx, { userId }) => {
    await userIn(ctx, userId)
    return {
      mfaPolicies: (await policiesOfUser(ctx.store, ctx.organization.id, userId)).map(renderMfaPolicy),
    }
  },
})

export const getMfaPolicy = defineQuery('get_mfa_policy', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    mfaPolicyId: r.string('mfaPolicyId', { max: 200 }),
  }),
  run: async (ctx, { userId, mfaPolicyId }) => {
    const row = await ctx.store.get('mfaPolicies', mfaPolicyId)
    if (!row || row.organizationId !== ctx.organization.id || row.userId !== userId)
      throw new NotFoundError({
        code: 'POLICY_NOT_FOUND',
        field: 'mfaPolicyId',
        message: `no MFA policy ${mfaPolicyId} on user ${userId}`,
      })
    return { mfaPolicy: renderMfaPolicy(row) }
  },
})

/** What an activity awaiting authenticators waits for, per matched policy (the published `v1MfaStatus`). */
export const getMfaStatus = defineQuery('get_mfa_status', {
  parse: (r) => {
    const userId = r.optString('userId', { max: 200 })
    return { activityId: r.string('activityId', { max: 200 }), ...(userId !== undefined ? { userId } : {}) }
  },
  run: async (ctx, { activityId, userId }) => {
    const activity = await ctx.store.get('activities', activityId)
    if (!activity || activity.organizationId !== ctx.organization.id)
      throw new NotFoundError({
        code: 'ACTIVITY_NOT_FOUND',
        field: 'activityId',
        message: `no activity ${activityId}`,
      })
    const challenge = await ctx.store.get('mfaChallenges', activityId)
    if (!challenge || (userId !== undefined && challenge.userId !== userId)) return { mfaStatuses: [] }
    return {
      mfaStatuses: challenge.policies.map(({ policyId, steps: required }) => {
        const proven = challenge.satisfied.filter((entry) => entry.policyId === policyId)
        return {
          mfaPolicyId: policyId,
          userId: challenge.userId,
          satisfied: proven.length >= required.length,
          satisfiedMethods: proven.map(
            (entry): AuthenticationMethod => ({
              type: entry.type as AuthenticationMethod['type'],
              ...(entry.id ? { id: entry.id } : {}),
            }),
          ),
          requiredMethods: required as RequiredAuthenticationMethod[],
        }
      }),
    }
  },
})

/** A user's TOTP factors (never their secrets) and how many unused recovery codes they hold. */
export const getMfaFactors = defineQuery('latchkey_get_mfa_factors', {
  parse: (r) => ({ userId: r.string('userId', { max: 200 }) }),
  run: async (ctx, { userId }) => {
    await userIn(ctx, userId)
    const factors = await ctx.store.findBy('mfaFactors', 'userId', userId)
    const codes = await ctx.store.findBy('mfaRecoveryCodes', 'userId', userId)
    return {
      factors: factors
        .sort((a, b) => a.createdAt - b.createdAt)
        .map((factor) => ({
          factorId: factor.id,
          factorName: factor.name,
          type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' as const,
          confirmed: factor.confirmed,
          createdAt: timestampOf(factor.createdAt),
        })),
      recoveryCodesRemaining: codes.length,
    }
  },
})
