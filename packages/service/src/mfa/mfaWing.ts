import { randomBytes } from '@noble/hashes/utils.js'
import { CONTACT_GUARD } from '../kernel/contactGuard.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { sendMfaCode } from './contactFactor.ts'
import { mfaContactGuardOf, refusingLostContacts } from './contactGuard.ts'
import {
  confirmTotpFactor,
  createRecoveryCodes,
  createTotpFactor,
  deleteTotpFactor,
  satisfyMfa,
} from './mfaFactors.ts'
import { mfaGate } from './mfaGate.ts'
import { createMfaPolicy, deleteMfaPolicy, updateMfaPolicy } from './mfaPolicies.ts'
import { getMfaFactors, getMfaPolicies, getMfaPolicy, getMfaStatus } from './mfaQueries.ts'
import { MFA, type MfaOptions, type MfaState, mfaStateOf, RECOVERY_KEY_ROW } from './mfaState.ts'

export const MFA_WING = 'mfa'

/**
 * The MFA wing (issue 38, docs/mfa.md): MFA policies in the published shape and their queries; a
 * gate that holds a user's activities their policies match in ACTIVITY_STATUS_AUTHENTICATORS_NEEDED
 * until `approve_activity` stamps and `latchkey_satisfy_mfa` codes prove every step, then runs them
 * once; TOTP factors (RFC 6238, secrets sealed), recovery codes (keyed hashes) and codes sent to a
 * verified e-mail or phone (`latchkey_send_mfa_code`, through the kernel's `ContactCodes`), which its
 * `CONTACT_GUARD` keeps: the contact a policy needs is not removed (contactGuard.ts). Its key for
 * those hashes is made once per database, sealed, in `pluginRows`.
 */
export function mfaWing(options: MfaOptions = {}): ServicePlugin<MfaState> {
  // Checks the options before anything opens (a bad one throws naming it).
  mfaStateOf(options, new Uint8Array(32))
  return {
    name: MFA_WING,
    activities: {
      create_mfa_policy: createMfaPolicy,
      update_mfa_policy: updateMfaPolicy,
      delete_mfa_policy: deleteMfaPolicy,
      latchkey_create_totp_factor: createTotpFactor,
      latchkey_confirm_totp_factor: confirmTotpFactor,
      latchkey_delete_totp_factor: deleteTotpFactor,
      latchkey_create_recovery_codes: createRecoveryCodes,
      latchkey_satisfy_mfa: satisfyMfa,
      latchkey_send_mfa_code: sendMfaCode,
    },
    queries: {
      get_mfa_policies: getMfaPolicies,
      get_mfa_policy: getMfaPolicy,
      get_mfa_status: getMfaStatus,
      latchkey_get_mfa_factors: getMfaFactors,
    } as NonNullable<ServicePlugin['queries']>,
    gate: refusingLostContacts(mfaGate),
    // A deleted user's policies, factors (their sealed TOTP secrets) and recovery codes go with them.
    async forget(tx, { userIds }) {
      for (const userId of userIds)
        for (const table of ['mfaPolicies', 'mfaFactors', 'mfaRecoveryCodes'] as const)
          for (const row of await tx.findBy(table, 'userId', userId)) await tx.delete(table, row.id)
    },
    // The gate reads the policies of the caller's organization: read ahead with the request.
    lookups: (organizationId) => [{ table: 'mfaPolicies', field: 'organizationId', value: organizationId }],
    async bootstrap(tx, runtime) {
      if (await tx.get('pluginRows', RECOVERY_KEY_ROW)) return
      const now = runtime.now()
      await tx.put('pluginRows', {
        id: RECOVERY_KEY_ROW,
        kind: RECOVERY_KEY_ROW,
        data: { sealedKey: runtime.seal(randomBytes(32)) },
        createdAt: now,
        updatedAt: now,
      })
    },
    state: {
      key: MFA,
      async load(runtime) {
        const row = await runtime.store.get('pluginRows', RECOVERY_KEY_ROW)
        if (!row) throw new Error('the MFA wing bootstrap did not store its recovery-code key')
        // A user's e-mail or phone that a policy of theirs needs is not taken away (domain/contacts.ts).
        runtime.keepState(CONTACT_GUARD, mfaContactGuardOf(runtime))
        return mfaStateOf(options, runtime.open(row.data.sealedKey as string))
      },
    },
  }
}
