// The contract between the handlers that change a user's e-mail or phone (domain/contacts.ts:
// update_user_email, update_user_phone_number) or remove their passkeys or API keys
// (delete_authenticators, delete_api_keys) and a wing that relies on them (the MFA wing: an e-mail
// or SMS code, a passkey or an API key proves a step of a policy). The handler asks the guard
// before its change commits, in its own transaction; the wing registers the guard as state. Neither
// side imports the other.

import { PluginStateKey, type Runtime } from './Runtime.ts'
import type { UserRow } from './store/model.ts'
import type { Transaction } from './store/Transaction.ts'

/** A change of one user's e-mail address or phone number, as it is about to be written. */
export interface ContactChange {
  /** The change's transaction: read through it (what the guard reads is part of the decision). */
  tx: Transaction
  /** The activity's time (what has expired by then proves nothing). */
  now: number
  /** The organization the user belongs to (the activity's). */
  organizationId: string
  kind: 'email' | 'phone'
  /** The user as stored before the change, and as the change will leave it. */
  before: UserRow
  after: UserRow
  /** The parameter a refusal names (`parameters.userEmail`, `parameters.userPhoneNumber`). */
  field: string
}

/** Passkeys or API keys of one user about to be removed (asked before they are). */
export interface CredentialRemoval {
  /** The removal's transaction. */
  tx: Transaction
  now: number
  organizationId: string
  userId: string
  /** The ids of the authenticators or API keys being removed. */
  removed: ReadonlySet<string>
  /** The parameter a refusal names (`parameters.authenticatorIds`, `parameters.apiKeyIds`). */
  field: string
}

/** Registered by a wing (the MFA wing) as `CONTACT_GUARD`. */
export interface ContactGuard {
  /** Resolves to allow the change; throws a 4xx naming `change.field` to refuse it. */
  check(change: ContactChange): Promise<void>
  /** Resolves to allow the removal; throws a 4xx naming `removal.field` to refuse it. */
  checkRemoval(removal: CredentialRemoval): Promise<void>
}

export const CONTACT_GUARD = new PluginStateKey<ContactGuard>('contact-guard')

/** The registered guard, if any (a service assembled without the MFA wing has none). */
const guardOf = (runtime: Runtime): ContactGuard | undefined => runtime.loadedState(CONTACT_GUARD)

/** Asks the registered guard about `change` (nothing to ask in a service without one). */
export async function guardContactChange(runtime: Runtime, change: ContactChange): Promise<void> {
  await guardOf(runtime)?.check(change)
}

/** Asks the registered guard about removing credentials, before they are removed. */
export async function guardCredentialRemoval(runtime: Runtime, removal: CredentialRemoval): Promise<void> {
  await guardOf(runtime)?.checkRemoval(removal)
}
