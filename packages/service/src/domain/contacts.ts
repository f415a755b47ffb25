import { ApiError } from '../errors.ts'
import type { Reader } from '../pipeline/Reader.ts'
import type { ActivityContext } from '../registry.ts'
import type { UserRow } from '../store/model.ts'
import { accountHook } from './accountHooks.ts'
import { findUser } from './users.ts'

const CONTACTS = {
  email: {
    field: 'userEmail',
    pattern: /^$|^[^\s@]+@[^\s@]+\.[^\s@]+$/,
    hint: 'an e-mail address (or empty to remove it)',
    max: 320,
    normalise: (value: string) => value.trim().toLowerCase(),
  },
  phone: {
    field: 'userPhoneNumber',
    pattern: /^$|^\+[1-9]\d{6,14}$/,
    hint: 'an E.164 phone number such as +15551234567 (or empty to remove it)',
    max: 16,
    normalise: (value: string) => value,
  },
} as const

export type ContactKind = keyof typeof CONTACTS

export interface ContactUpdate {
  userId: string
  contact: string
  verificationToken?: string
}

export function readContactUpdate(r: Reader, kind: ContactKind): ContactUpdate {
  const spec = CONTACTS[kind]
  const verificationToken = r.optString('verificationToken', { max: 8192 })
  return {
    userId: r.string('userId', { max: 200 }),
    contact: spec.normalise(
      r.string(spec.field, { min: 0, max: spec.max, pattern: spec.pattern, hint: spec.hint }),
    ),
    ...(verificationToken !== undefined ? { verificationToken } : {}),
  }
}

/**
 * `update_user_email` / `update_user_phone_number`. An empty value removes the contact. A new
 * contact must come with a verification token proving it (the sign-in plugin's check of
 * sign-up: minted for this parent organization, spent once), and may belong to one account among
 * the parent organization's sub-organizations: OTP login finds accounts by contact, so an
 * unproven or shared one would route another person's login into this account.
 */
export async function updateContact(ctx: ActivityContext, kind: ContactKind, p: ContactUpdate) {
  const spec = CONTACTS[kind]
  const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
  const without: UserRow = { ...user }
  delete without[spec.field]
  if (p.contact === '') {
    await ctx.tx.put('users', { ...without, updatedAt: ctx.now })
    return { userId: user.id }
  }
  const tokenField = 'parameters.verificationToken'
  if (p.verificationToken === undefined)
    throw new ApiError(
      'FIELD_REQUIRED',
      `${tokenField} is required: a verification token (init_otp + verify_otp) proving the new ${kind === 'email' ? 'e-mail address' : 'phone number'}`,
      tokenField,
    )
  const sameOrg = (await ctx.tx.findBy('users', 'organizationId', ctx.organization.id)).some(
    (other) => other.id !== user.id && other[spec.field] === p.contact,
  )
  if (sameOrg)
    throw new ApiError(
      'ALREADY_EXISTS',
      `another user of this organization has this ${kind === 'email' ? 'e-mail address' : 'phone number'}`,
      `parameters.${spec.field}`,
    )
  const updated: UserRow = { ...without, [spec.field]: p.contact, updatedAt: ctx.now }
  const { hook, hookContext } = await accountHook(ctx, 'verificationToken', tokenField)
  // The hook checks the token proves the contact of the given users (here only the new contact,
  // so a token for the user's other contact does not pass), that no other account holds it, and
  // spends the token.
  const { userEmail: _email, userPhoneNumber: _phone, ...bare } = user
  await hook(hookContext, p.verificationToken, [{ ...bare, [spec.field]: p.contact }])
  await ctx.tx.put('users', updated)
  return { userId: user.id }
}
