import { callerVouchesForContacts, verifiedContact, withContact } from '../domain/verifiedContact.ts'
import { FieldError } from '../kernel/base/errors.ts'
import type { ContactChange, ContactGuard, CredentialRemoval } from '../kernel/contactGuard.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ActivityGate, GateInput } from '../kernel/registry.ts'
import type { UserRow } from '../kernel/store/model.ts'
import { assertFactorRemovable } from './mfaFactors.ts'
import { policiesOfUser } from './mfaGate.ts'
import { contactReach, stepLostBy } from './provable.ts'

const CONTACT_NAME = { email: 'e-mail address', phone: 'phone number' } as const

/**
 * The MFA wing's guard on a user's e-mail and phone (the kernel's `CONTACT_GUARD`): a change that
 * takes away the verified contact an e-mail or SMS step of one of the user's MFA policies needs,
 * leaving that step with no method the user holds (an authenticator app or recovery codes, another
 * verified contact, a passkey or API key of theirs), is refused with a 400 naming the field.
 * Otherwise the policy could never be proven again, nor changed or removed by its user (that waits
 * for it too). Removing, or swapping for an address nobody proved, is the same loss; a swap proven
 * by a verification token keeps a verified contact and passes. Judged in the change's transaction:
 * on PostgreSQL a policy created meanwhile and this change are serialised (one reruns and sees the
 * other), and the policy's creation refuses a step nothing proves (mfaPolicies.ts), so either
 * order ends with a provable policy.
 */
export const mfaContactGuardOf = (runtime: Runtime): ContactGuard => ({
  async check({ tx, now, organizationId, kind, before, after, field }: ContactChange) {
    // Only the loss of a verified contact can make a step unprovable.
    if (verifiedContact(before, kind) === undefined || verifiedContact(after, kind) !== undefined) return
    for (const policy of await policiesOfUser(tx, organizationId, before.id)) {
      const judged = {
        userId: before.id,
        steps: policy.steps,
        now,
        reaches: contactReach(runtime),
        user: before,
      }
      const step = await stepLostBy(tx, judged, { user: after })
      if (step < 0) continue
      throw new FieldError({
        field,
        reason: `is the only way user ${before.id} can prove step ${step + 1} of MFA policy ${policy.id} (${policy.name}): verify another ${CONTACT_NAME[kind]} with a verification token, enrol another factor the policy accepts, or change or remove the policy first`,
      })
    }
  },

  /**
   * The same for passkeys and API keys: removing the last one a passkey or API-key step of the
   * user's policy can be proven with (and nothing else of that step the user holds) is refused.
   */
  async checkRemoval({ tx, now, organizationId, userId, removed, field }: CredentialRemoval) {
    for (const policy of await policiesOfUser(tx, organizationId, userId)) {
      const judged = { userId, steps: policy.steps, now, reaches: contactReach(runtime) }
      const step = await stepLostBy(tx, judged, { withoutCredentials: removed })
      if (step < 0) continue
      throw new FieldError({
        field,
        reason: `leaves user ${userId} no way to prove step ${step + 1} of MFA policy ${policy.id} (${policy.name}): add another passkey or factor the policy accepts, or change or remove the policy first`,
      })
    }
  },
})

const CHANGES = {
  update_user_email: { kind: 'email', field: 'userEmail', unverified: 'userEmailUnverified' },
  update_user_phone_number: {
    kind: 'phone',
    field: 'userPhoneNumber',
    unverified: 'userPhoneNumberUnverified',
  },
} as const

/**
 * When the gate holds a contact change for its caller's own policies: a change the guard will
 * refuse whatever is proven (a removal, or a swap no token can make verified) is refused now, so
 * that the user does not spend a code on an activity that can only fail. Anything the run might
 * still allow is left to it (the guard decides there, in the same way).
 */
async function refuseLostContactEarly({ tx, runtime, row, organization, caller }: GateInput): Promise<void> {
  const change = CHANGES[row.path as keyof typeof CHANGES]
  if (!change) return
  const intent = row.intent as { userId?: unknown; verificationToken?: unknown } & Record<string, unknown>
  const value = intent[change.field]
  if (typeof intent.userId !== 'string' || typeof value !== 'string') return
  const before = await tx.get('users', intent.userId)
  if (!before || before.organizationId !== organization.id) return
  let after: UserRow
  if (value === '') {
    after = { ...before }
    delete after[change.field]
    delete after[change.unverified]
  } else if (intent.verificationToken === undefined && !callerVouchesForContacts({ organization, caller }))
    after = withContact(before, change.kind, value, false)
  else return
  await mfaContactGuardOf(runtime).check({
    tx,
    now: runtime.now(),
    organizationId: organization.id,
    kind: change.kind,
    before,
    after,
    field: `parameters.${change.field}`,
  })
}

/** The same for removing a TOTP factor that is the last way to prove a policy of its user. */
async function refuseLastFactorEarly({ tx, runtime, row, organization }: GateInput): Promise<void> {
  if (row.path !== 'latchkey_delete_totp_factor') return
  const { userId, factorId } = row.intent as { userId?: unknown; factorId?: unknown }
  if (typeof userId !== 'string' || typeof factorId !== 'string') return
  const factor = await tx.get('mfaFactors', factorId)
  if (!factor || factor.userId !== userId || factor.organizationId !== organization.id) return
  await assertFactorRemovable(tx, {
    organizationId: organization.id,
    userId,
    factorId,
    now: runtime.now(),
    reaches: contactReach(runtime),
  })
}

/**
 * `gate` (the MFA wing's), refusing at once a contact change or a factor removal it would hold
 * only to fail.
 */
export const refusingLostContacts = (gate: ActivityGate): ActivityGate => ({
  ...gate,
  async hold(input) {
    const held = await gate.hold(input)
    // The refusal rolls back the transaction, the challenge `hold` wrote with it.
    if (held) {
      await refuseLostContactEarly(input)
      await refuseLastFactorEarly(input)
    }
    return held
  },
})
