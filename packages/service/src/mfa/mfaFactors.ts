import { randomBytes } from '@noble/hashes/utils.js'
import { base32nopad } from '@scure/base'
import { activityByFingerprint, runAsSubmitter } from '../activities/voteOnActivity.ts'
import {
  CredentialError,
  FieldError,
  LimitError,
  NotFoundError,
  PermissionError,
} from '../kernel/base/errors.ts'
import { type ActivityContext, defineActivity, type PrepareContext } from '../kernel/registry.ts'
import type { MfaFactorRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { respondWith } from '../pipeline/executeActivity.ts'
import { type CheckedContactCode, checkContactCode, contactProof } from './contactFactor.ts'
import { challengeOf, type Proof, policiesOfUser, proveOnActivity } from './mfaGate.ts'
import { chargeAttempt, mfaState, normalizeRecoveryCode } from './mfaState.ts'
import { contactReach, type Reach, stepLostBy } from './provable.ts'
import { encodeSecret, matchTotp, otpauthUri } from './totp.ts'

/** Most TOTP factors (confirmed or not) one user holds. */
export const MAX_TOTP_FACTORS = 5
/** Recovery codes per generation: 10 codes of 10 base32 characters (50 bits each). */
export const RECOVERY_CODE_COUNT = 10

const TOTP_CODE = /^[0-9]{6}$/

/**
 * The caller's own user: factors are managed by the user they belong to, in their own
 * organization (an operator removes a user's factors by removing the user).
 */
async function ownUser(ctx: ActivityContext, userId: string) {
  if (userId !== ctx.caller.userId)
    throw new PermissionError({
      field: 'parameters.userId',
      message: 'a user manages only their own second factors',
    })
  const user = await ctx.tx.get('users', userId)
  if (!user || user.organizationId !== ctx.organization.id)
    throw new NotFoundError({
      code: 'USER_NOT_FOUND',
      field: 'parameters.userId',
      message: `no user ${userId} in organization ${ctx.organization.id}`,
    })
  return user
}

async function factorOf(ctx: ActivityContext, userId: string, factorId: string): Promise<MfaFactorRow> {
  const factor = await ctx.tx.get('mfaFactors', factorId)
  if (!factor || factor.userId !== userId || factor.organizationId !== ctx.organization.id)
    throw new NotFoundError({
      code: 'AUTHENTICATOR_NOT_FOUND',
      field: 'parameters.factorId',
      message: `no TOTP factor ${factorId} of user ${userId}`,
    })
  return factor
}

/** One code attempt of the caller, charged before the transaction on every instance's shared budget. */
async function chargeCaller(ctx: PrepareContext): Promise<void> {
  if (!(await chargeAttempt(ctx.runtime, ctx.caller.userId)))
    throw new LimitError({
      code: 'OTP_ATTEMPTS_EXCEEDED',
      message: 'too many second-factor codes tried; wait a few minutes',
    })
}

const readCode = (value: string, field: string) => {
  if (!TOTP_CODE.test(value)) throw new FieldError({ field, reason: 'must be 6 digits' })
  return value
}

/**
 * Checks a TOTP code against the user's factor(s) (`only` one, or every confirmed one) and
 * remembers the step it was for, in this transaction: a code is accepted once, and never one
 * older than the last accepted. Returns the factor it proved, or throws OTP_INVALID.
 */
async function acceptTotp(
  ctx: ActivityContext,
  { userId, code, factors }: { userId: string; code: string; factors: MfaFactorRow[] },
): Promise<MfaFactorRow> {
  for (const factor of factors) {
    const secret = ctx.runtime.open(factor.sealedSecret)
    const step = matchTotp(secret, code, { nowMs: ctx.now, lastStep: factor.lastStep })
    if (step === undefined) continue
    const accepted = { ...factor, lastStep: step, updatedAt: ctx.now }
    await ctx.tx.put('mfaFactors', accepted)
    return accepted
  }
  throw new CredentialError({
    code: 'OTP_INVALID',
    field: 'parameters.code',
    message: `the code is not valid for a TOTP factor of user ${userId} now (or was already used)`,
  })
}

/**
 * Enrols a TOTP factor, unconfirmed: the secret and its `otpauth://` URI are answered once, to its
 * user. It acts on the caller's own factors only, so it never waits for the root quorum (whose
 * approving vote would run it and be answered with the secret, not its user): the MFA gate
 * still holds it for the user's own policies, proven by the user.
 */
export const createTotpFactor = defineActivity('latchkey_create_totp_factor', {
  selfService: true,
  skipConsensus: true,
  shownOnce: ['secret', 'otpauthUri'],
  parse: (r) => {
    const factorName = r.optString('factorName', { max: 64 })
    return { userId: r.string('userId', { max: 200 }), ...(factorName !== undefined ? { factorName } : {}) }
  },
  run: async (ctx, p) => {
    const user = await ownUser(ctx, p.userId)
    const factors = await ctx.tx.findBy('mfaFactors', 'userId', user.id)
    if (factors.length >= MAX_TOTP_FACTORS)
      throw new FieldError({
        field: 'parameters.userId',
        reason: `holds at most ${MAX_TOTP_FACTORS} TOTP factors`,
      })
    const secret = randomBytes(20)
    const id = ctx.newId()
    await ctx.tx.put('mfaFactors', {
      id,
      organizationId: ctx.organization.id,
      userId: user.id,
      kind: 'TOTP',
      name: p.factorName ?? 'Authenticator app',
      sealedSecret: ctx.runtime.seal(secret),
      confirmed: false,
      lastStep: 0,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    const { issuer } = mfaState(ctx.runtime)
    const account = user.userEmail || user.userName || user.id
    return { factorId: id, secret: encodeSecret(secret), otpauthUri: otpauthUri({ secret, issuer, account }) }
  },
})

/**
 * A factor made before the user's newest MFA policy is not confirmed under their policies. Its
 * enrolment waited for none of the policies made since, so whoever held the session then (a
 * thief, before the user turned MFA on) may hold its secret: confirming it later, with a stolen
 * session, would give them a factor of their own that proves every TOTP step. The newest, not the
 * oldest: a thief's session could first make a policy of its own that it proves by itself (a
 * SESSION step), so that its enrolment is "held" and at once let through. A factor made after
 * every current policy came from an enrolment they all held, and is confirmed as usual; one made
 * between is deleted and enrolled again. (The confirmation itself is not held: its code is a
 * secret parameter, not kept for a later run.)
 */
async function assertEnrolledUnderPolicies(ctx: ActivityContext, factor: MfaFactorRow): Promise<void> {
  if (factor.confirmed) return
  const policies = await policiesOfUser(ctx.tx, ctx.organization.id, factor.userId)
  if (policies.length === 0) return
  const since = Math.max(...policies.map((policy) => policy.createdAt))
  if (factor.createdAt >= since) return
  throw new FieldError({
    field: 'parameters.factorId',
    reason:
      'was made before your newest MFA policy, so that policy did not approve it: delete it and enrol a new factor (the enrolment waits for your policies)',
  })
}

/** Confirms a TOTP factor with a first code (charged on the user's attempt budget). */
export const confirmTotpFactor = defineActivity('latchkey_confirm_totp_factor', {
  selfService: true,
  skipConsensus: true,
  secretParameters: ['code'],
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    factorId: r.string('factorId', { max: 200 }),
    code: readCode(r.string('code', { max: 16 }), r.field('code')),
  }),
  prepare: (ctx) => chargeCaller(ctx),
  run: async (ctx, p) => {
    await ownUser(ctx, p.userId)
    const factor = await factorOf(ctx, p.userId, p.factorId)
    await assertEnrolledUnderPolicies(ctx, factor)
    const accepted = await acceptTotp(ctx, { userId: p.userId, code: p.code, factors: [factor] })
    await ctx.tx.put('mfaFactors', { ...accepted, confirmed: true })
    return { factorId: factor.id }
  },
})

/**
 * Refuses removing TOTP factor `factorId` of `userId` when it is the last way to prove an MFA
 * policy of theirs: it could not be re-enrolled (the enrolment waits for the policy), and neither
 * could the policy be changed or removed. Judged on everything that proves a step, a passkey or a
 * contact as well as a code: a step that a deleted passkey also named is the factor's alone now
 * (`stepLostBy`). Asked when the removal is
 * submitted (mfaWing: no code is spent on a removal that can only fail) and again when it runs.
 */
export async function assertFactorRemovable(
  reads: Reads,
  {
    organizationId,
    userId,
    factorId,
    now,
    reaches,
  }: { organizationId: string; userId: string; factorId: string; now: number; reaches: Reach },
): Promise<void> {
  for (const policy of await policiesOfUser(reads, organizationId, userId)) {
    if (
      (await stepLostBy(
        reads,
        { userId, steps: policy.steps, now, reaches },
        { withoutFactorId: factorId },
      )) < 0
    )
      continue
    throw new FieldError({
      field: 'parameters.factorId',
      reason: `is the last way to prove MFA policy ${policy.id} (${policy.name}): enrol another factor, or change or remove the policy first`,
    })
  }
}

/** Removes a TOTP factor (held by every MFA policy of the user while they hold a factor: mfaGate). */
export const deleteTotpFactor = defineActivity('latchkey_delete_totp_factor', {
  selfService: true,
  parse: (r) => ({ userId: r.string('userId', { max: 200 }), factorId: r.string('factorId', { max: 200 }) }),
  run: async (ctx, p) => {
    await ownUser(ctx, p.userId)
    const factor = await factorOf(ctx, p.userId, p.factorId)
    await assertFactorRemovable(ctx.tx, {
      organizationId: ctx.organization.id,
      userId: p.userId,
      factorId: factor.id,
      now: ctx.now,
      reaches: contactReach(ctx.runtime),
    })
    await ctx.tx.delete('mfaFactors', factor.id)
    return { factorId: factor.id }
  },
})

/** A recovery code as shown: 10 base32 characters in two groups of five. */
function newRecoveryCode(): string {
  const text = base32nopad.encode(randomBytes(7)).slice(0, 10)
  return `${text.slice(0, 5)}-${text.slice(5)}`
}

/**
 * Ten single-use recovery codes, replacing the user's earlier ones: answered once, to their user
 * (never waiting for the root quorum, as `createTotpFactor`), kept as keyed hashes (HMAC-SHA256
 * under the wing's sealed key), each standing in for one TOTP proof.
 */
export const createRecoveryCodes = defineActivity('latchkey_create_recovery_codes', {
  selfService: true,
  skipConsensus: true,
  shownOnce: ['recoveryCodes'],
  parse: (r) => ({ userId: r.string('userId', { max: 200 }) }),
  run: async (ctx, p) => {
    const user = await ownUser(ctx, p.userId)
    for (const old of await ctx.tx.findBy('mfaRecoveryCodes', 'userId', user.id))
      await ctx.tx.delete('mfaRecoveryCodes', old.id)
    const { recoveryHash } = mfaState(ctx.runtime)
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
    for (const code of codes)
      await ctx.tx.put('mfaRecoveryCodes', {
        id: ctx.newId(),
        organizationId: ctx.organization.id,
        userId: user.id,
        hash: recoveryHash(user.id, code),
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
    return { recoveryCodes: codes }
  },
})

/** Spends one recovery code of `userId` in this transaction (deleted: concurrent uses, one wins). */
async function spendRecoveryCode(ctx: ActivityContext, userId: string, code: string): Promise<Proof> {
  const hash = mfaState(ctx.runtime).recoveryHash(userId, code)
  const row = (await ctx.tx.findBy('mfaRecoveryCodes', 'hash', hash)).find((entry) => entry.userId === userId)
  if (!row)
    throw new CredentialError({
      code: 'OTP_INVALID',
      field: 'parameters.recoveryCode',
      message: `not an unused recovery code of user ${userId}`,
    })
  await ctx.tx.delete('mfaRecoveryCodes', row.id)
  return { type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP', id: '', anyId: true }
}

/**
 * Proves a step of the caller's own activity awaiting authenticators, with a code of one of their
 * confirmed TOTP factors, a recovery code, or the code `latchkey_send_mfa_code` sent to their
 * verified e-mail or phone for that activity; the activity runs (once, in this transaction) when
 * nothing else is missing. Answers with that activity, like `approve_activity`.
 */
export const satisfyMfa = defineActivity('latchkey_satisfy_mfa', {
  selfService: true,
  skipConsensus: true,
  secretParameters: ['totpCode', 'recoveryCode', 'contactCode'],
  parse: (r) => {
    const totpCode = r.optString('totpCode', { max: 16 })
    const recoveryCode = r.optString('recoveryCode', { max: 32 })
    const contactCode = r.optString('contactCode', { max: 16 })
    const given = [totpCode, recoveryCode, contactCode].filter((code) => code !== undefined).length
    if (given !== 1)
      throw new FieldError({
        field: r.field('totpCode'),
        reason: 'or parameters.recoveryCode or parameters.contactCode is required, exactly one',
      })
    if (recoveryCode !== undefined && !/^[A-Z2-7]{10}$/.test(normalizeRecoveryCode(recoveryCode)))
      throw new FieldError({ field: r.field('recoveryCode'), reason: 'must be 10 base32 characters' })
    if (contactCode !== undefined && !/^[0-9A-Za-z]{6,9}$/.test(contactCode))
      throw new FieldError({
        field: r.field('contactCode'),
        reason: 'must be the 6 to 9 characters that were sent',
      })
    return {
      fingerprint: r.string('fingerprint', { max: 128 }),
      ...(totpCode !== undefined ? { totpCode: readCode(totpCode, r.field('totpCode')) } : {}),
      ...(recoveryCode !== undefined ? { recoveryCode } : {}),
      ...(contactCode !== undefined ? { contactCode } : {}),
    }
  },
  prepare: async (ctx, p) => {
    await chargeCaller(ctx)
    if (p.contactCode === undefined) return undefined
    return checkContactCode(ctx, { fingerprint: p.fingerprint, code: p.contactCode })
  },
  run: async (ctx, p) => {
    const activity = await activityByFingerprint(ctx, p.fingerprint)
    respondWith(ctx, activity.id)
    const userId = ctx.caller.userId
    await challengeOf(ctx, { activity, field: 'parameters.fingerprint' })
    let proof: Proof
    if (p.contactCode !== undefined)
      proof = await contactProof(ctx, { activity, checked: ctx.prepared as CheckedContactCode })
    else if (p.recoveryCode !== undefined) proof = await spendRecoveryCode(ctx, userId, p.recoveryCode)
    else {
      const factors = (await ctx.tx.findBy('mfaFactors', 'userId', userId)).filter(
        (factor) => factor.confirmed,
      )
      const factor = await acceptTotp(ctx, { userId, code: p.totpCode!, factors }).catch((error: unknown) => {
        throw error instanceof CredentialError
          ? new CredentialError({ code: 'OTP_INVALID', field: 'parameters.totpCode', message: error.message })
          : error
      })
      proof = { type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP', id: factor.id }
    }
    if (await proveOnActivity(ctx, { activity, proof, field: 'parameters.fingerprint' }))
      await runAsSubmitter(ctx, activity)
    return {}
  },
})
