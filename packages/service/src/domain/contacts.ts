import { ConflictError } from '../kernel/base/errors.ts'
import { guardContactChange } from '../kernel/contactGuard.ts'
import { EMAIL_ADDRESS, EMAIL_ADDRESS_HINT } from '../kernel/emailAddress.ts'
import type { Reader } from '../kernel/Reader.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import type { UserRow } from '../kernel/store/model.ts'
import { accountHook } from './accountHooks.ts'
import { contactValues, releaseUnheld } from './claimedValues.ts'
import { assertRootKeepsAccess } from './sessions.ts'
import { findUser } from './users.ts'
import { type ContactKind, callerVouchesForContacts, withContact } from './verifiedContact.ts'

const CONTACTS = {
  email: {
    field: 'userEmail',
    unverified: 'userEmailUnverified',
    pattern: new RegExp(`^$|${EMAIL_ADDRESS.source}`, EMAIL_ADDRESS.flags),
    hint: `${EMAIL_ADDRESS_HINT} (or empty to remove it)`,
    max: 320,
    normalise: (value: string) => value.trim().toLowerCase(),
  },
  phone: {
    field: 'userPhoneNumber',
    unverified: 'userPhoneNumberUnverified',
    pattern: /^$|^\+[1-9]\d{6,14}$/,
    hint: 'an E.164 phone number such as +15551234567 (or empty to remove it)',
    max: 16,
    normalise: (value: string) => value,
  },
} as const

export interface ContactUpdate {
  userId: string
  contact: string
  verificationToken?: string
  /** Proof of the key the token is bound to, when another key stamps the request. */
  clientSignature?: unknown
}

export function readContactUpdate(r: Reader, kind: ContactKind): ContactUpdate {
  const spec = CONTACTS[kind]
  const verificationToken = r.optString('verificationToken', { max: 8192 })
  const clientSignature = r.has('clientSignature') ? r.value.clientSignature : undefined
  return {
    userId: r.string('userId', { max: 200 }),
    contact: spec.normalise(
      r.string(spec.field, { min: 0, max: spec.max, pattern: spec.pattern, hint: spec.hint }),
    ),
    ...(verificationToken !== undefined ? { verificationToken } : {}),
    ...(clientSignature !== undefined ? { clientSignature } : {}),
  }
}

/**
 * `update_user_email` / `update_user_phone_number`. An empty value removes the contact. A new
 * contact is verified when a verification token proves it and the key the token is bound to made
 * the request (stamped it, or signed `clientSignature`): the sign-in plugin's check of sign-up,
 * minted for this parent organization, spent once, and one account per verified contact among the
 * parent organization's sub-organizations. Without that proof it is stored unverified (in a
 * top-level organization its root users vouch for it): no code is sent to it and no login routed
 * by it, since OTP login finds accounts by contact. Removing the only root user's last way in, or
 * swapping it for a contact no token proves, is refused (`assertRootKeepsAccess`); so is losing the
 * verified contact an MFA policy of the user needs (`guardContactChange`: the MFA wing's guard).
 */
export async function updateContact(ctx: ActivityContext, kind: ContactKind, p: ContactUpdate) {
  const spec = CONTACTS[kind]
  const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
  const without: UserRow = { ...user }
  delete without[spec.field]
  delete without[spec.unverified]
  const field = `parameters.${spec.field}`
  // The old contact's claim goes once the account no longer holds it (kernel/accountClaims.ts).
  const previous = contactValues(user).filter((value) => value.kind === kind)
  if (p.contact === '') {
    await ctx.tx.put('users', { ...without, updatedAt: ctx.now })
    // A verified contact may be the account's only way back in (an e-mail or SMS sign-in).
    await assertRootKeepsAccess(ctx, without, field)
    // …or the only way to prove an MFA policy of the user (the guard a wing registers).
    await guardContactChange(ctx.runtime, {
      tx: ctx.tx,
      now: ctx.now,
      organizationId: ctx.organization.id,
      kind,
      before: user,
      after: without,
      field,
    })
    await releaseUnheld(ctx.tx, ctx.organization, previous)
    return { userId: user.id }
  }
  const sameOrg = (await ctx.tx.findBy('users', 'organizationId', ctx.organization.id)).some(
    (other) => other.id !== user.id && other[spec.field] === p.contact,
  )
  if (sameOrg)
    throw new ConflictError({
      field,
      message: `another user of this organization has this ${kind === 'email' ? 'e-mail address' : 'phone number'}`,
    })
  let verified = callerVouchesForContacts(ctx)
  if (p.verificationToken !== undefined) {
    const tokenField = 'parameters.verificationToken'
    const { hook, hookContext } = await accountHook(ctx, 'verificationToken', tokenField)
    // The hook checks the token proves the contact of the given users (here only the new contact,
    // so a token for the user's other contact does not pass), that no other account holds it
    // verified, and that its key made this request; then spends the token.
    const { userEmail: _email, userPhoneNumber: _phone, ...bare } = user
    verified =
      (await hook(hookContext, p.verificationToken, [{ ...bare, [spec.field]: p.contact }], {
        clientSignature: p.clientSignature,
        otherwise: 'unverified',
      })) || verified
  }
  const updated = withContact(without, kind, p.contact, verified)
  await ctx.tx.put('users', { ...updated, updatedAt: ctx.now })
  // Swapping the only way in for a contact nobody proved locks the account out as surely as
  // removing it. A valid token for the new contact is a proof (the hook threw otherwise) even when
  // its bound key did not stamp the request, which leaves the contact unverified: the published
  // @turnkey/core `updateUserEmail` stamps with the session, never with `verifyOtp`'s fresh key.
  if (p.verificationToken === undefined) await assertRootKeepsAccess(ctx, updated, field)
  // A swap that leaves the contact unverified loses what an MFA policy of the user may need.
  await guardContactChange(ctx.runtime, {
    tx: ctx.tx,
    now: ctx.now,
    organizationId: ctx.organization.id,
    kind,
    before: user,
    after: updated,
    field,
  })
  await releaseUnheld(ctx.tx, ctx.organization, previous)
  return { userId: user.id }
}
