import {
  AUTHENTICATION_TYPES,
  type AuthenticationMethod,
  type AuthenticationType,
  type RequiredAuthenticationMethod,
} from '@latchkey/protocol'
import { FieldError, NotFoundError } from '../kernel/base/errors.ts'
import { Reader } from '../kernel/Reader.ts'
import { type ActivityContext, defineActivity } from '../kernel/registry.ts'
import type { MfaPolicyRow } from '../kernel/store/model.ts'
import { readExpression } from '../policies/readPolicyParams.ts'
import { policiesOfUser } from './mfaGate.ts'
import { contactReach, unprovableStep } from './provable.ts'

/** Most MFA policies one user holds (each is evaluated on every activity of theirs). */
export const MAX_MFA_POLICIES_PER_USER = 20
/** Most steps in a policy, and methods in a step. */
const MAX_STEPS = 8
const MAX_METHODS = 8

/**
 * The methods this service can prove (docs/mfa.md): a stamp (passkey, API key, session) on
 * `approve_activity`, a TOTP code, or a code sent to the user's verified e-mail or phone
 * (`latchkey_send_mfa_code`), with `latchkey_satisfy_mfa`. OAuth as a step is refused at creation
 * rather than accepted and never satisfiable.
 */
const PROVABLE: readonly AuthenticationType[] = [
  'AUTHENTICATION_TYPE_PASSKEY',
  'AUTHENTICATION_TYPE_API_KEY',
  'AUTHENTICATION_TYPE_SESSION',
  'AUTHENTICATION_TYPE_LATCHKEY_TOTP',
  'AUTHENTICATION_TYPE_EMAIL_OTP',
  'AUTHENTICATION_TYPE_SMS_OTP',
]

function readMethod(value: unknown, field: string): AuthenticationMethod {
  const r = new Reader(value, field)
  const type = r.enum('type', AUTHENTICATION_TYPES)
  if (!PROVABLE.includes(type))
    throw new FieldError({
      field: r.field('type'),
      reason: `${type} cannot be proven by this service yet; use one of ${PROVABLE.join(', ')}`,
    })
  const id = r.optString('id', { min: 0, max: 200 })
  if (id && (type === 'AUTHENTICATION_TYPE_EMAIL_OTP' || type === 'AUTHENTICATION_TYPE_SMS_OTP'))
    throw new FieldError({
      field: r.field('id'),
      reason: `names nothing for ${type}: the code goes to the user's verified contact; leave it out`,
    })
  return id ? { type, id } : { type }
}

function readSteps(r: Reader, name: string): RequiredAuthenticationMethod[] {
  return r.array(
    name,
    (value, field) => ({
      any: new Reader(value, field).array('any', readMethod, { min: 1, max: MAX_METHODS }),
    }),
    { min: 1, max: MAX_STEPS },
  )
}

/** A condition in the policy language, parsed now: a syntax error is a 400 naming the field. */
function readCondition(r: Reader): string {
  const condition = readExpression(r, 'condition', 'condition')
  if (condition === undefined || condition.trim() === '')
    throw new FieldError({ code: 'FIELD_REQUIRED', field: r.field('condition'), reason: 'is required' })
  return condition
}

/**
 * Refuses steps the user cannot prove yet: only a code proves them and they hold no TOTP factor
 * and no verified contact that fits, or only a passkey or an API key proves them and the user holds
 * none it names (a session method is proven by any session). Their enrolment would itself wait for
 * the policy, and so would the policy's own change or removal, locking them out (docs/mfa.md).
 */
async function assertProvable(
  ctx: ActivityContext,
  { userId, steps }: { userId: string; steps: RequiredAuthenticationMethod[] },
): Promise<void> {
  const step = await unprovableStep(ctx.tx, {
    userId,
    steps,
    now: ctx.now,
    reaches: contactReach(ctx.runtime),
  })
  if (step >= 0)
    throw new FieldError({
      field: `parameters.requiredAuthenticationMethods[${step}].any`,
      reason: `has no method user ${userId} can prove today (no confirmed TOTP factor or recovery codes, no verified e-mail or phone a code can be sent to, no passkey or durable API key of theirs it names): enrol one before requiring it`,
    })
}

const readOrder = (r: Reader) => r.int('order', { min: 0, max: 1_000_000 })

/** The user the policy is on: a user of the organization the activity acts in. */
async function userOf(ctx: ActivityContext, userId: string): Promise<void> {
  const user = await ctx.tx.get('users', userId)
  if (!user || user.organizationId !== ctx.organization.id)
    throw new NotFoundError({
      code: 'USER_NOT_FOUND',
      field: 'parameters.userId',
      message: `no user ${userId} in organization ${ctx.organization.id}`,
    })
}

async function policyOf(ctx: ActivityContext, userId: string, mfaPolicyId: string): Promise<MfaPolicyRow> {
  const policy = await ctx.tx.get('mfaPolicies', mfaPolicyId)
  if (!policy || policy.organizationId !== ctx.organization.id || policy.userId !== userId)
    throw new NotFoundError({
      code: 'POLICY_NOT_FOUND',
      field: 'parameters.mfaPolicyId',
      message: `no MFA policy ${mfaPolicyId} on user ${userId}`,
    })
  return policy
}

/** ACTIVITY_TYPE_CREATE_MFA_POLICY: decided like any activity (root quorum or a policy). */
export const createMfaPolicy = defineActivity('create_mfa_policy', {
  parse: (r) => {
    const notes = r.optString('notes', { min: 0, max: 4096 })
    return {
      userId: r.string('userId', { max: 200 }),
      mfaPolicyName: r.string('mfaPolicyName', { max: 256 }),
      condition: readCondition(r),
      requiredAuthenticationMethods: readSteps(r, 'requiredAuthenticationMethods'),
      order: readOrder(r),
      ...(notes !== undefined ? { notes } : {}),
    }
  },
  run: async (ctx, p) => {
    await userOf(ctx, p.userId)
    await assertProvable(ctx, { userId: p.userId, steps: p.requiredAuthenticationMethods })
    const existing = await policiesOfUser(ctx.tx, ctx.organization.id, p.userId)
    if (existing.length >= MAX_MFA_POLICIES_PER_USER)
      throw new FieldError({
        field: 'parameters.userId',
        reason: `holds at most ${MAX_MFA_POLICIES_PER_USER} MFA policies`,
      })
    const id = ctx.newId()
    await ctx.tx.put('mfaPolicies', {
      id,
      organizationId: ctx.organization.id,
      userId: p.userId,
      name: p.mfaPolicyName,
      condition: p.condition,
      steps: p.requiredAuthenticationMethods,
      order: p.order,
      notes: p.notes ?? '',
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    return { mfaPolicyId: id }
  },
})

/** ACTIVITY_TYPE_UPDATE_MFA_POLICY: by the user it is on, only once the policy itself is satisfied (mfaGate). */
export const updateMfaPolicy = defineActivity('update_mfa_policy', {
  parse: (r) => {
    const name = r.optString('mfaPolicyName', { max: 256 })
    const condition = r.has('condition') ? readCondition(r) : undefined
    const steps = r.has('requiredAuthenticationMethods')
      ? readSteps(r, 'requiredAuthenticationMethods')
      : undefined
    const order = r.has('order') ? readOrder(r) : undefined
    const notes = r.optString('notes', { min: 0, max: 4096 })
    return {
      userId: r.string('userId', { max: 200 }),
      mfaPolicyId: r.string('mfaPolicyId', { max: 200 }),
      ...(name !== undefined ? { mfaPolicyName: name } : {}),
      ...(condition !== undefined ? { condition } : {}),
      ...(steps !== undefined ? { requiredAuthenticationMethods: steps } : {}),
      ...(order !== undefined ? { order } : {}),
      ...(notes !== undefined ? { notes } : {}),
    }
  },
  run: async (ctx, p) => {
    const policy = await policyOf(ctx, p.userId, p.mfaPolicyId)
    if (p.requiredAuthenticationMethods)
      await assertProvable(ctx, { userId: p.userId, steps: p.requiredAuthenticationMethods })
    await ctx.tx.put('mfaPolicies', {
      ...policy,
      name: p.mfaPolicyName ?? policy.name,
      condition: p.condition ?? policy.condition,
      steps: p.requiredAuthenticationMethods ?? policy.steps,
      order: p.order ?? policy.order,
      notes: p.notes ?? policy.notes,
      updatedAt: ctx.now,
    })
    return { mfaPolicyId: policy.id }
  },
})

/** ACTIVITY_TYPE_DELETE_MFA_POLICY: by the user it is on, only once the policy itself is satisfied (mfaGate). */
export const deleteMfaPolicy = defineActivity('delete_mfa_policy', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    mfaPolicyId: r.string('mfaPolicyId', { max: 200 }),
  }),
  run: async (ctx, p) => {
    const policy = await policyOf(ctx, p.userId, p.mfaPolicyId)
    await ctx.tx.delete('mfaPolicies', policy.id)
    return { mfaPolicyId: policy.id }
  },
})
