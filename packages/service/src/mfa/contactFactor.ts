import type { OtpType } from '@latchkey/protocol'
import { verifiedContact } from '../domain/verifiedContact.ts'
import { ApiError, ConflictError, CredentialError, FieldError, NotFoundError } from '../kernel/base/errors.ts'
import { CONTACT_CODES, type ContactCodes } from '../kernel/contactCodes.ts'
import { type ActivityContext, defineActivity, type PrepareContext } from '../kernel/registry.ts'
import type { ActivityRow, MfaChallengeRow } from '../kernel/store/model.ts'
import { respondWith } from '../pipeline/executeActivity.ts'
import { CONTACT_METHODS, challengeOf, type Proof } from './mfaGate.ts'

/** The e-mail and SMS methods of a step, and the OTP channel each sends its code on. */
export const CONTACT_FACTOR_TYPES = ['AUTHENTICATION_TYPE_EMAIL_OTP', 'AUTHENTICATION_TYPE_SMS_OTP'] as const
export type ContactFactorType = (typeof CONTACT_FACTOR_TYPES)[number]
const OTP_TYPE_OF: Record<ContactFactorType, OtpType> = {
  AUTHENTICATION_TYPE_EMAIL_OTP: 'OTP_TYPE_EMAIL',
  AUTHENTICATION_TYPE_SMS_OTP: 'OTP_TYPE_SMS',
}

/** The sign-in wing's codes; a clear 400 where the service runs without it. */
function contactCodes(ctx: PrepareContext, field: string): ContactCodes {
  const codes = ctx.runtime.loadedState(CONTACT_CODES)
  if (!codes)
    throw new FieldError({ field, message: 'this service sends no one-time codes (it runs without sign-in)' })
  return codes
}

/** An engine error (its own field names) as a refusal naming `field`. */
async function naming<T>(field: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.errorCode, error.message, field, error.extra)
    throw error
  }
}

/**
 * The caller's own activity awaiting authenticators with `fingerprint`, and its challenge, from
 * committed data (before the activity's transaction): another user's, or a finished one, is
 * refused before any code is sent or looked at.
 */
async function heldForCaller(ctx: PrepareContext, fingerprint: string) {
  const field = 'parameters.fingerprint'
  const store = ctx.runtime.store
  const activity = (await store.findBy('activities', 'fingerprint', fingerprint)).find(
    (row) => row.organizationId === ctx.organization.id,
  )
  if (!activity)
    throw new NotFoundError({
      code: 'ACTIVITY_NOT_FOUND',
      field,
      message: `no activity with fingerprint ${fingerprint}`,
    })
  const challenge = await challengeOf({ tx: store, caller: ctx.caller }, { activity, field })
  return { activity, challenge }
}

/** True when a policy's next unproven step of `challenge` may be proven by `type`. */
const awaits = (challenge: MfaChallengeRow, type: string): boolean =>
  challenge.policies.some(({ policyId, steps }) => {
    const step = challenge.satisfied.filter((entry) => entry.policyId === policyId).length
    return step < steps.length && steps[step]!.any.some((method) => method.type === type)
  })

/** `j***@example.com`, `+1415*****23`: enough for the user to recognise, not to learn. */
export function maskContact(contact: string): string {
  const at = contact.indexOf('@')
  if (at > 0) return `${contact[0]}***${contact.slice(at)}`
  return `${contact.slice(0, 5)}${'*'.repeat(Math.max(0, contact.length - 7))}${contact.slice(-2)}`
}

/**
 * Sends a code to the caller's verified e-mail or phone for an e-mail or SMS step of their held
 * activity, through the sign-in wing's OTP engine (its per-contact send budget, the operator's
 * templates, the delivery wing or the dev outbox). The code is bound to that activity's challenge:
 * a newer one replaces it, and only `latchkey_satisfy_mfa` on the same activity by the same user
 * can spend it.
 */
export const sendMfaCode = defineActivity('latchkey_send_mfa_code', {
  selfService: true,
  skipConsensus: true,
  parse: (r) => ({
    fingerprint: r.string('fingerprint', { max: 128 }),
    type: r.enum('type', CONTACT_FACTOR_TYPES),
  }),
  prepare: async (ctx, p) => {
    const field = 'parameters.type'
    const { activity, challenge } = await heldForCaller(ctx, p.fingerprint)
    if (!awaits(challenge, p.type))
      throw new FieldError({
        field,
        message: `activity ${activity.id} waits for no ${p.type} step now (see get_mfa_status)`,
      })
    const user = await ctx.runtime.store.get('users', ctx.caller.userId)
    const kind = CONTACT_METHODS[p.type]!
    const contact = user ? verifiedContact(user, kind) : undefined
    if (!contact)
      throw new FieldError({
        field,
        message: `user ${ctx.caller.userId} has no verified ${kind === 'email' ? 'e-mail address' : 'phone number'} to send a code to`,
      })
    const codes = contactCodes(ctx, field)
    const { otpId } = await naming(field, () =>
      codes.send({
        organizationId: ctx.organization.id,
        userId: ctx.caller.userId,
        otpType: OTP_TYPE_OF[p.type],
        contact,
      }),
    )
    return { activityId: activity.id, otpId, sentTo: maskContact(contact) }
  },
  run: async (ctx, p) => {
    const sent = ctx.prepared as { activityId: string; otpId: string; sentTo: string }
    const activity = await ctx.tx.get('activities', sent.activityId)
    if (!activity)
      throw new NotFoundError({
        code: 'ACTIVITY_NOT_FOUND',
        field: 'parameters.fingerprint',
        message: 'no such activity',
      })
    const challenge = await challengeOf(ctx, { activity, field: 'parameters.fingerprint' })
    await ctx.tx.put('mfaChallenges', {
      ...challenge,
      contactCode: { type: p.type, otpId: sent.otpId },
      updatedAt: ctx.now,
    })
    return { sentTo: sent.sentTo }
  },
})

/** What `latchkey_satisfy_mfa`'s prepare found a contact code to prove. */
export interface CheckedContactCode {
  activityId: string
  otpId: string
  type: string
  contact: string
}

/**
 * Checks a contact code against the code sent for the caller's held activity (before the
 * transaction: the engine spends it in its own, once, and counts a wrong guess on every instance).
 */
export async function checkContactCode(
  ctx: PrepareContext,
  { fingerprint, code }: { fingerprint: string; code: string },
): Promise<CheckedContactCode> {
  const field = 'parameters.contactCode'
  const { activity, challenge } = await heldForCaller(ctx, fingerprint)
  const sent = challenge.contactCode
  if (!sent)
    throw new ConflictError({
      field,
      message: `no code was sent for activity ${activity.id} (or it was used): send one with latchkey_send_mfa_code`,
    })
  const codes = contactCodes(ctx, field)
  const checked = await naming(field, () =>
    codes.check({ organizationId: ctx.organization.id, otpId: sent.otpId, code }),
  )
  return { activityId: activity.id, otpId: sent.otpId, type: sent.type, contact: checked.contact }
}

/**
 * In the transaction: the proof a checked contact code gives, if the challenge still names that
 * code and the contact is still the user's verified one; the code is unbound from the challenge.
 */
export async function contactProof(
  ctx: ActivityContext,
  { activity, checked }: { activity: ActivityRow; checked: CheckedContactCode },
): Promise<Proof> {
  const field = 'parameters.contactCode'
  const challenge = await challengeOf(ctx, { activity, field: 'parameters.fingerprint' })
  const user = await ctx.tx.get('users', ctx.caller.userId)
  const kind = CONTACT_METHODS[checked.type]
  if (
    activity.id !== checked.activityId ||
    challenge.contactCode?.otpId !== checked.otpId ||
    !kind ||
    !user ||
    verifiedContact(user, kind) !== checked.contact
  )
    throw new CredentialError({
      code: 'OTP_INVALID',
      field,
      message: `the code is no longer the one sent for activity ${activity.id}`,
    })
  const { contactCode: _used, ...rest } = challenge
  await ctx.tx.put('mfaChallenges', { ...rest, updatedAt: ctx.now })
  respondWith(ctx, activity.id)
  return { type: checked.type, id: '' }
}
