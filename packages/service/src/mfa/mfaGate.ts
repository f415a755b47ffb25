import { isSessionKey, SESSION_CREDENTIAL_TYPES } from '../domain/sessions.ts'
import type { ContactKind } from '../domain/verifiedContact.ts'
import { recordAppEvent } from '../kernel/appEvents.ts'
import { ConflictError, PermissionError } from '../kernel/base/errors.ts'
import { decodeTransactionForPolicy } from '../kernel/crypto/signTransaction.ts'
import type { ActivityContext, ActivityGate, Caller, GateInput } from '../kernel/registry.ts'
import type { ActivityRow, MfaChallengeRow, MfaPolicyRow } from '../kernel/store/model.ts'
import type { Reads, Transaction } from '../kernel/store/Store.ts'
import { evaluateExpression } from '../policies/evaluateExpression.ts'
import { type DecisionBudget, decisionBudget, parseCondition } from '../policies/evaluatePolicies.ts'
import { POLICY_LIMITS } from '../policies/limits.ts'
import { policyContextsOf } from '../policies/policyContextOf.ts'

/** One proven method: its type and the credential or factor that proved it ('' when none is named). */
export interface Proof {
  type: string
  id: string
  /** A recovery code: proves a TOTP method whatever factor it names. */
  anyId?: boolean
}

/** Never held: the activities that satisfy or cancel a held one. */
const NEVER_HELD = new Set([
  'approve_activity',
  'reject_activity',
  'latchkey_satisfy_mfa',
  'latchkey_send_mfa_code',
])

/**
 * Changing how a user proves themself: once any MFA policy is on the user, adding or removing a
 * second factor, minting recovery codes, adding a passkey or an API key of their own, changing
 * their e-mail or phone, or linking or unlinking a login (deleting a durable API key too:
 * `removesDurableKey`, which reads the keys) waits for every one of their policies, so
 * a stolen session can neither switch MFA off, nor enrol a factor (or a credential, or a contact
 * codes go to) of its own to satisfy it with, nor take the account's logins (docs/mfa.md).
 */
const FACTOR_CHANGES = new Set([
  'latchkey_create_totp_factor',
  'latchkey_delete_totp_factor',
  'latchkey_create_recovery_codes',
  'create_authenticators',
  'create_api_keys',
  // Linked logins: the contacts that e-mail and SMS codes go to, OAuth identities, passkeys.
  'update_user_email',
  'update_user_phone_number',
  'create_oauth_providers',
  'delete_oauth_providers',
  'delete_authenticators',
])

/**
 * Whether the activity is a `delete_api_keys` of a durable key (`isSessionKey`) of the user it
 * names, read in the gate's transaction: unlinking a login, a factor change like deleting a
 * passkey. A stolen session would otherwise unlink the user's wallet or recovery key, and sign
 * the owner out of every session it opened, with no second factor. Logging out (a list of session
 * keys, the caller's own or another device's) is not; neither is a key the activity cannot delete
 * (another user's, a missing one: it fails when it runs).
 */
async function removesDurableKey(tx: Reads, row: ActivityRow): Promise<boolean> {
  if (row.path !== 'delete_api_keys') return false
  const { userId, apiKeyIds } = row.intent as { userId?: unknown; apiKeyIds?: unknown }
  if (typeof userId !== 'string' || !Array.isArray(apiKeyIds)) return false
  for (const id of new Set(apiKeyIds)) {
    if (typeof id !== 'string') continue
    const key = await tx.get('apiKeys', id)
    if (key && key.userId === userId && key.organizationId === row.organizationId && !isSessionKey(key))
      return true
  }
  return false
}

/**
 * Changing who else may act in the organization: once any MFA policy is on the submitter, adding a
 * user (with keys of its own), changing the root quorum, creating, changing or removing a policy
 * (removing a DENY grants as surely as adding an ALLOW) and changing the user tags policies key on
 * wait for every one of the submitter's policies. MFA policies bind the user who submits; without
 * this a stolen session would add a user it holds the key of, make it a root user or let a policy
 * allow it, and act through it with no code (docs/mfa.md). The paths cover every version of each
 * activity (`ACTIVITIES`' types share a path). Not here: `create_sub_organization` and
 * `latchkey_import_user` (a sub-organization cannot make sub-organizations, and one made by the
 * parent gives its root users nothing in the parent); `delete_users` grants no one anything (root
 * users cannot be deleted) but destroys: it is a destructive change.
 */
export const AUTHORITY_CHANGES: ReadonlySet<string> = new Set([
  'create_users',
  'update_root_quorum',
  'create_policy',
  'create_policies',
  'update_policy',
  'delete_policy',
  'delete_policies',
  'create_user_tag',
  'update_user_tag',
])

/**
 * Destroying what the policies protect: once any MFA policy is on the submitter, deleting wallets,
 * users or the whole sub-organization waits for every policy too. A stolen session cannot steal
 * through them, but it could otherwise wipe keys that were never exported, which is as final for
 * the user, or delete another user, and with them every way they sign in (their durable API keys,
 * passkeys, OAuth links, e-mail and phone logins), their second factors and the sessions they
 * opened: more than deleting one durable key of theirs (`removesDurableKey`), which waits. Every
 * `delete_users` waits, whatever its users hold: a user with no key, passkey or OAuth link may
 * still sign in by an e-mail or SMS code.
 * Logging out (`delete_api_keys` of session keys) is never held; deleting a durable key is a
 * factor change (`removesDurableKey`); removing a key a policy needs is refused by the contact guard.
 */
export const DESTRUCTIVE_CHANGES: ReadonlySet<string> = new Set([
  'delete_wallets',
  'delete_users',
  'delete_sub_organization',
])

/** The MFA policies on `userId` (of organization `organizationId`), lowest `order` first. */
export async function policiesOfUser(
  reads: Reads,
  organizationId: string,
  userId: string,
): Promise<MfaPolicyRow[]> {
  return (await reads.findBy('mfaPolicies', 'organizationId', organizationId))
    .filter((policy) => policy.userId === userId)
    .sort((a, b) => a.order - b.order || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
}

/** The contact an e-mail or SMS code method is sent to. */
export const CONTACT_METHODS: Readonly<Record<string, ContactKind>> = {
  AUTHENTICATION_TYPE_EMAIL_OTP: 'email',
  AUTHENTICATION_TYPE_SMS_OTP: 'phone',
}

/**
 * Whether a policy's condition holds for the activity: true in any of its scopes. A condition that
 * fails to evaluate (a keyword the activity lacks, too many steps) counts as matching: MFA fails
 * closed, so conditions test `activity.type` or `activity.resource` before a keyword (docs/mfa.md).
 * Its steps are taken from `budget`, shared by every policy in every scope of the activity (each
 * payload, each call): once it is spent, each evaluation fails at its first step, so every
 * condition not yet judged counts as matching and the activity waits for those policies.
 */
function conditionHolds(
  condition: string,
  scopes: readonly Record<string, unknown>[],
  budget: DecisionBudget,
): boolean {
  const tree = parseCondition(condition)
  return scopes.some((scope) => {
    try {
      return evaluateExpression(tree, scope as never, POLICY_LIMITS.maxSteps, budget) !== false
    } catch {
      return true
    }
  })
}

/**
 * The policies an activity of `caller` must satisfy: matched by condition, or guarded by rule. The
 * rules: a policy guards itself; factor (a durable key's deletion included), authority and
 * destructive changes, and a change to another
 * user's MFA policy, wait for every policy; so does
 * loosening a guard on spending (`loosensGuard`, the limits wing's `ActivityHandler.loosensGuard`:
 * raising a spending limit, letting it reach more addresses, removing one that still covers
 * someone), so a stolen session cannot lift the cap a user set and then spend in amounts no
 * condition matches. Tightening one, or removing an agent's limit once its key is gone, does not.
 */
async function policiesFor(
  tx: Transaction,
  row: ActivityRow,
  caller: Caller,
  { loosensGuard, facts }: Pick<GateInput, 'loosensGuard' | 'facts'>,
): Promise<MfaPolicyRow[]> {
  const policies = await policiesOfUser(tx, caller.organizationId, caller.userId)
  if (policies.length === 0) return []
  const intent = row.intent
  // A policy on this user is changed or removed by this user only by satisfying it.
  const guarded =
    row.path === 'update_mfa_policy' || row.path === 'delete_mfa_policy' ? intent.mfaPolicyId : undefined
  // Another user's MFA policy (a root user may change it): as an authority change, it waits for
  // every policy of this user, since lifting it frees that user of their proof.
  const othersPolicy = guarded !== undefined && !policies.some((policy) => policy.id === guarded)
  const allGuarded =
    othersPolicy ||
    FACTOR_CHANGES.has(row.path) ||
    (await removesDurableKey(tx, row)) ||
    AUTHORITY_CHANGES.has(row.path) ||
    DESTRUCTIVE_CHANGES.has(row.path) ||
    (await loosensGuard?.(row)) === true
  // Without the facts its `prepare` fixes (a send judged on a vote, before it is prepared), a
  // condition reading them fails to evaluate and holds it.
  const scopes = await policyContextsOf(tx, row, {
    decodeTransaction: decodeTransactionForPolicy,
    ...(facts ? { facts } : {}),
  })
  // One decision's steps for every condition of every policy in every scope (`conditionHolds`),
  // as the policies' own evaluations have: an end user's stored costly conditions over a batch of
  // 100 payloads cost no more than over one.
  const budget = decisionBudget()
  return policies.filter(
    (policy) =>
      allGuarded || policy.id === guarded || conditionHolds(policy.condition, scopes as never, budget),
  )
}

/** What the stamp of `caller` proves: a passkey, an API key, or a session (read-only sessions prove nothing). */
export async function proofOfCaller(reads: Reads, caller: Caller): Promise<Proof | undefined> {
  if (caller.readOnly || caller.credential.kind === 'READ_ONLY_SESSION') return undefined
  if (caller.credential.kind === 'WEBAUTHN')
    return { type: 'AUTHENTICATION_TYPE_PASSKEY', id: caller.credential.id }
  const key = await reads.get('apiKeys', caller.credential.id)
  if (!key || key.userId !== caller.userId) return undefined
  // A session's `id` in a policy names a session profile, which Latchkey does not have: a session
  // proves only a method that names no id.
  if (SESSION_CREDENTIAL_TYPES.includes(key.credentialType))
    return { type: 'AUTHENTICATION_TYPE_SESSION', id: '' }
  return { type: 'AUTHENTICATION_TYPE_API_KEY', id: key.id }
}

export const provesMethod = (proof: Proof, method: { type: string; id?: string }) =>
  method.type === proof.type && (!method.id || proof.anyId === true || method.id === proof.id)

/**
 * Applies a proof to each policy's next unsatisfied step (steps are proven in order, one step per
 * proof, and one credential or factor proves at most one step of a policy); true if it proved any.
 */
export function applyProof(challenge: MfaChallengeRow, proof: Proof): boolean {
  let advanced = false
  for (const { policyId, steps } of challenge.policies) {
    const done = challenge.satisfied.filter((entry) => entry.policyId === policyId)
    const step = done.length
    if (step >= steps.length) continue
    if (done.some((entry) => entry.type === proof.type && entry.id === proof.id && !proof.anyId)) continue
    if (!steps[step]!.any.some((method) => provesMethod(proof, method))) continue
    challenge.satisfied.push({ policyId, step, type: proof.type, id: proof.id })
    advanced = true
  }
  return advanced
}

export const isSatisfied = (challenge: MfaChallengeRow): boolean =>
  challenge.policies.every(
    ({ policyId, steps }) =>
      challenge.satisfied.filter((entry) => entry.policyId === policyId).length >= steps.length,
  )

/**
 * The challenge of `activity`, held and submitted by the caller: anything else is refused before a
 * code is looked at (a finished activity, another user's).
 */
export async function challengeOf(
  ctx: { tx: Reads; caller: Caller },
  { activity, field }: { activity: ActivityRow; field: string },
): Promise<MfaChallengeRow> {
  const challenge = await ctx.tx.get('mfaChallenges', activity.id)
  if (!challenge || activity.status !== 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    throw new ConflictError({
      code: 'ACTIVITY_NOT_VOTABLE',
      field,
      message: `activity ${activity.id} is ${activity.status}, not awaiting authenticators`,
    })
  if (challenge.userId !== ctx.caller.userId)
    throw new PermissionError({
      field,
      message: `only the user who submitted activity ${activity.id} may satisfy its authenticators`,
    })
  return challenge
}

/**
 * Records `proof` on the challenge of the held `activity`, by `ctx.caller`: only its submitter may
 * satisfy it, and a proof that advances no step is refused. True once every step is proven.
 */
export async function proveOnActivity(
  ctx: ActivityContext,
  { activity, proof, field }: { activity: ActivityRow; proof: Proof; field: string },
): Promise<boolean> {
  const challenge = await challengeOf(ctx, { activity, field })
  if (!applyProof(challenge, proof))
    throw new PermissionError({
      field,
      message: `${proof.type} proves none of the steps activity ${activity.id} waits for (see get_mfa_status)`,
    })
  const satisfied = isSatisfied(challenge)
  // Counted on the challenge: the second satisfaction of an activity held again took the first's
  // event id, and the webhook fan-out keeps an endpoint's first delivery of an id.
  const satisfactions = (challenge.satisfactions ?? 0) + (satisfied ? 1 : 0)
  await ctx.tx.put('mfaChallenges', {
    ...challenge,
    ...(satisfied ? { satisfactions } : {}),
    updatedAt: ctx.now,
  })
  if (satisfied) {
    await recordAppEvent(ctx.runtime, ctx.tx, {
      id:
        satisfactions === 1
          ? `${activity.id}.mfa_satisfied`
          : `${activity.id}.mfa_satisfied.${satisfactions}`,
      organization: ctx.organization,
      type: 'LATCHKEY_MFA_SATISFIED',
      data: {
        activityId: activity.id,
        activityType: activity.type,
        userId: activity.userId,
        policyIds: challenge.policies.map((policy) => policy.policyId),
      },
    })
    return true
  }
  await ctx.tx.put('activities', { ...activity, updatedAt: ctx.now })
  return false
}

/**
 * The activity `vote` (an `approve_activity`) approves when that counts as consent to it: another
 * user's activity of the same organization awaiting consensus. Not an approval that proves a step
 * of a held activity (the published way of satisfying MFA), nor one of the voter's own activity,
 * whose policies hold it anyway once the quorum allows it.
 */
async function consentedTo(
  tx: Transaction,
  vote: ActivityRow,
  voter: Caller,
): Promise<ActivityRow | undefined> {
  const fingerprint = vote.intent.fingerprint
  if (typeof fingerprint !== 'string') return undefined
  return (await tx.findBy('activities', 'fingerprint', fingerprint)).find(
    (row) =>
      row.organizationId === vote.organizationId &&
      row.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED' &&
      row.userId !== voter.userId,
  )
}

/**
 * The MFA wing's gate: an allowed activity of a user whose MFA policies match it waits in
 * ACTIVITY_STATUS_AUTHENTICATORS_NEEDED with a challenge (the matched policies' steps as they are
 * now); the submission's own stamp proves what it can. `approve_activity` by the same user proves
 * its stamp's method (the published way), `latchkey_satisfy_mfa` a TOTP or recovery code.
 */
export const mfaGate: ActivityGate = {
  status: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
  async hold({ tx, runtime, row, caller, loosensGuard, facts }: GateInput) {
    // An approval of another user's activity awaiting consensus is the voter's consent to it: it
    // waits for the voter's policies that would hold that activity were it the voter's own, by
    // condition or by rule (loosening a spending guard included).
    const consent = row.path === 'approve_activity' ? await consentedTo(tx, row, caller) : undefined
    if (!consent && NEVER_HELD.has(row.path)) return false
    // A vote judges the activity it consents to, not yet prepared: without its facts.
    const policies = await policiesFor(tx, consent ?? row, caller, {
      loosensGuard,
      ...(facts && !consent ? { facts } : {}),
    })
    if (policies.length === 0) return false
    const now = runtime.now()
    const challenge: MfaChallengeRow = {
      id: row.id,
      organizationId: row.organizationId,
      userId: caller.userId,
      policies: policies.map((policy) => ({ policyId: policy.id, steps: policy.steps })),
      satisfied: [],
      createdAt: now,
      updatedAt: now,
    }
    // Judged again before it runs (a send prepared again, with another fee): what was proven of a
    // policy it waited for still counts, while that policy's steps are the same.
    const earlier = consent ? undefined : await tx.get('mfaChallenges', row.id)
    if (earlier?.satisfactions !== undefined) challenge.satisfactions = earlier.satisfactions
    if (earlier && earlier.userId === caller.userId) {
      challenge.createdAt = earlier.createdAt
      const same = (policyId: string, steps: unknown) =>
        earlier.policies.some(
          (policy) => policy.policyId === policyId && JSON.stringify(policy.steps) === JSON.stringify(steps),
        )
      challenge.satisfied = earlier.satisfied.filter((entry) =>
        challenge.policies.some(
          (policy) => policy.policyId === entry.policyId && same(entry.policyId, policy.steps),
        ),
      )
    }
    const proof = await proofOfCaller(tx, caller)
    if (proof) applyProof(challenge, proof)
    if (isSatisfied(challenge)) return false
    await tx.put('mfaChallenges', challenge)
    return true
  },
  async approve(ctx, activity) {
    const proof = await proofOfCaller(ctx.tx, ctx.caller)
    if (!proof)
      throw new PermissionError({
        field: 'parameters.fingerprint',
        message: 'a read-only session proves no authentication method',
      })
    return proveOnActivity(ctx, { activity, proof, field: 'parameters.fingerprint' })
  },
}
