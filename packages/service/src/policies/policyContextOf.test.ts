import { ACTIVITIES, ACTIVITY_PATHS, type ActivityPath } from '@latchkey/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openMemoryStore } from '../kernel/store/memory.ts'
import type { Store } from '../kernel/store/Store.ts'
import { evaluatePolicies } from './evaluatePolicies.ts'
import { policyContextOf } from './policyContextOf.ts'

/** `activity.resource` and `activity.action` of every activity, written out so a change shows. */
const EXPECTED: Record<ActivityPath, [resource: string, action: string]> = {
  sign_raw_payloads: ['WALLET', 'SIGN'],
  sign_raw_payload: ['WALLET', 'SIGN'],
  sign_transaction: ['WALLET', 'SIGN'],
  otp_login: ['AUTH', 'CREATE'],
  update_user_tag: ['USER', 'UPDATE'],
  delete_wallets: ['WALLET', 'DELETE'],
  export_wallet_account: ['WALLET', 'EXPORT'],
  create_read_only_session: ['AUTH', 'CREATE'],
  update_user_name: ['USER', 'UPDATE'],
  init_import_wallet: ['WALLET', 'IMPORT'],
  import_wallet: ['WALLET', 'IMPORT'],
  create_wallet: ['WALLET', 'CREATE'],
  create_wallet_accounts: ['WALLET', 'CREATE'],
  create_sub_organization: ['ORGANIZATION', 'CREATE'],
  create_fiat_on_ramp_credential: ['CREDENTIAL', 'CREATE'],
  create_user_tag: ['USER', 'CREATE'],
  eth_send_raw_transaction: ['WALLET', 'SEND'],
  eth_send_transaction: ['WALLET', 'SEND'],
  sol_send_transaction: ['WALLET', 'SEND'],
  init_otp: ['AUTH', 'CREATE'],
  verify_otp: ['AUTH', 'CREATE'],
  oauth2_authenticate: ['AUTH', 'CREATE'],
  oauth_login: ['AUTH', 'CREATE'],
  stamp_login: ['AUTH', 'CREATE'],
  export_wallet: ['WALLET', 'EXPORT'],
  create_api_keys: ['CREDENTIAL', 'CREATE'],
  delete_api_keys: ['CREDENTIAL', 'DELETE'],
  create_authenticators: ['CREDENTIAL', 'CREATE'],
  delete_authenticators: ['CREDENTIAL', 'DELETE'],
  approve_activity: ['ACTIVITY', 'APPROVE'],
  reject_activity: ['ACTIVITY', 'REJECT'],
  create_policy: ['POLICY', 'CREATE'],
  create_policies: ['POLICY', 'CREATE'],
  update_policy: ['POLICY', 'UPDATE'],
  delete_policy: ['POLICY', 'DELETE'],
  // MFA (issue 38)
  create_mfa_policy: ['POLICY', 'CREATE'],
  update_mfa_policy: ['POLICY', 'UPDATE'],
  delete_mfa_policy: ['POLICY', 'DELETE'],
  latchkey_create_totp_factor: ['CREDENTIAL', 'CREATE'],
  latchkey_confirm_totp_factor: ['CREDENTIAL', 'UPDATE'],
  latchkey_delete_totp_factor: ['CREDENTIAL', 'DELETE'],
  latchkey_create_recovery_codes: ['CREDENTIAL', 'CREATE'],
  latchkey_satisfy_mfa: ['ACTIVITY', 'APPROVE'],
  latchkey_send_mfa_code: ['ACTIVITY', 'APPROVE'],
  delete_policies: ['POLICY', 'DELETE'],
  create_users: ['USER', 'CREATE'],
  delete_users: ['USER', 'DELETE'],
  create_oauth_providers: ['CREDENTIAL', 'CREATE'],
  delete_oauth_providers: ['CREDENTIAL', 'DELETE'],
  update_user_email: ['USER', 'UPDATE'],
  update_user_phone_number: ['USER', 'UPDATE'],
  update_root_quorum: ['ORGANIZATION', 'UPDATE'],
  delete_sub_organization: ['ORGANIZATION', 'DELETE'],
  create_private_keys: ['PRIVATE_KEY', 'CREATE'],
  export_private_key: ['PRIVATE_KEY', 'EXPORT'],
  init_import_private_key: ['PRIVATE_KEY', 'IMPORT'],
  import_private_key: ['PRIVATE_KEY', 'IMPORT'],
  // spending limits (issue 37)
  latchkey_create_spending_limit: ['POLICY', 'CREATE'],
  latchkey_update_spending_limit: ['POLICY', 'UPDATE'],
  latchkey_delete_spending_limit: ['POLICY', 'DELETE'],
  create_session_profile: ['POLICY', 'CREATE'],
  latchkey_update_session_profile: ['POLICY', 'UPDATE'],
  latchkey_delete_session_profile: ['POLICY', 'DELETE'],
  // webhooks (issue 39)
  create_webhook_endpoint: ['ORGANIZATION', 'CREATE'],
  update_webhook_endpoint: ['ORGANIZATION', 'UPDATE'],
  delete_webhook_endpoint: ['ORGANIZATION', 'DELETE'],
  latchkey_redeliver_webhook_event: ['ORGANIZATION', 'UPDATE'],
  // import (issue 40)
  latchkey_init_user_import: ['ORGANIZATION', 'IMPORT'],
  latchkey_import_user: ['ORGANIZATION', 'IMPORT'],
}

describe('policyContextOf', () => {
  let store: Store
  beforeAll(async () => {
    store = await openMemoryStore()
  })
  afterAll(() => store.close())

  /** What a policy sees of `path` submitted with no parameters (no wallet or account to read). */
  const contextOf = (path: ActivityPath) =>
    policyContextOf(store, {
      id: `activity-${path}`,
      organizationId: 'org',
      path,
      type: ACTIVITIES[path].type,
      intent: {},
    })

  it('names the resource and action of every activity', async () => {
    expect(
      Object.fromEntries(
        ACTIVITY_PATHS.map((path) => [path, [ACTIVITIES[path].resource, ACTIVITIES[path].action]]),
      ),
    ).toEqual(EXPECTED)
    for (const path of ACTIVITY_PATHS)
      expect((await contextOf(path)).activity, path).toMatchObject({
        kind: path,
        type: ACTIVITIES[path].type,
        resource: EXPECTED[path][0],
        action: EXPECTED[path][1],
      })
  })

  it.each([
    'export_private_key',
    'import_private_key',
    'init_import_private_key',
    'create_private_keys',
    'delete_sub_organization',
    'update_root_quorum',
    'create_oauth_providers',
    'delete_oauth_providers',
    'update_user_email',
    'update_user_phone_number',
    'export_wallet',
  ] as const)('lets a policy naming the resource and action of %s match it', async (path) => {
    const [resource, action] = EXPECTED[path]
    const result = evaluatePolicies({
      policies: [
        {
          id: 'named',
          effect: 'EFFECT_ALLOW',
          condition: `activity.resource == '${resource}' && activity.action == '${action}'`,
        },
        { id: 'by-action', effect: 'EFFECT_DENY', condition: `activity.action == '${action}'` },
        { id: 'other', effect: 'EFFECT_ALLOW', condition: "activity.resource == 'NOTHING'" },
      ],
      context: await contextOf(path),
      consensus: { approvers: [{ id: 'u1', tags: [], email: '', alias: 'a' }], credentials: [] },
      rootQuorumMet: false,
    })
    expect(result).toEqual({
      outcome: 'OUTCOME_DENY_EXPLICIT',
      evaluations: [
        { policyId: 'named', outcome: 'OUTCOME_ALLOW' },
        { policyId: 'by-action', outcome: 'OUTCOME_DENY_EXPLICIT' },
        { policyId: 'other', outcome: 'OUTCOME_DENY_IMPLICIT' },
      ],
    })
  })
})
