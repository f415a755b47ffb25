import type { ActivityHandlers } from '../kernel/registry.ts'
import { approveActivity } from './approveActivity.ts'
import { createApiKeys } from './createApiKeys.ts'
import { createAuthenticators } from './createAuthenticators.ts'
import { createFiatOnRampCredential } from './createFiatOnRampCredential.ts'
import { createOauthProviders } from './createOauthProviders.ts'
import { createPolicies } from './createPolicies.ts'
import { createPolicy } from './createPolicy.ts'
import { createPrivateKeys } from './createPrivateKeys.ts'
import { createReadOnlySession } from './createReadOnlySession.ts'
import { createSubOrganization } from './createSubOrganization.ts'
import { createUsers } from './createUsers.ts'
import { createUserTag } from './createUserTag.ts'
import { createWallet } from './createWallet.ts'
import { createWalletAccounts } from './createWalletAccounts.ts'
import { deleteApiKeys } from './deleteApiKeys.ts'
import { deleteAuthenticators } from './deleteAuthenticators.ts'
import { deleteOauthProviders } from './deleteOauthProviders.ts'
import { deletePolicies } from './deletePolicies.ts'
import { deletePolicy } from './deletePolicy.ts'
import { deleteSubOrganization } from './deleteSubOrganization.ts'
import { deleteUsers } from './deleteUsers.ts'
import { deleteWallets } from './deleteWallets.ts'
import { exportPrivateKey } from './exportPrivateKey.ts'
import { exportWallet } from './exportWallet.ts'
import { exportWalletAccount } from './exportWalletAccount.ts'
import { importPrivateKey } from './importPrivateKey.ts'
import { importWallet } from './importWallet.ts'
import { initImportPrivateKey } from './initImportPrivateKey.ts'
import { initImportWallet } from './initImportWallet.ts'
import { rejectActivity } from './rejectActivity.ts'
import { signRawPayload } from './signRawPayload.ts'
import { signRawPayloads } from './signRawPayloads.ts'
import { signTransaction } from './signTransaction.ts'
import { updatePolicy } from './updatePolicy.ts'
import { updateRootQuorum } from './updateRootQuorum.ts'
import { updateUserEmail } from './updateUserEmail.ts'
import { updateUserName } from './updateUserName.ts'
import { updateUserPhoneNumber } from './updateUserPhoneNumber.ts'
import { updateUserTag } from './updateUserTag.ts'

/**
 * The activities this module implements. The sign-in plugin supplies `init_otp`, `verify_otp`,
 * `otp_login`, `oauth2_authenticate` and `oauth_login`; the sending wing `eth_send_transaction`,
 * `sol_send_transaction` and `eth_send_raw_transaction`.
 */
export const builtinActivities: ActivityHandlers = {
  create_policies: createPolicies,
  create_policy: createPolicy,
  create_users: createUsers,
  delete_policies: deletePolicies,
  delete_policy: deletePolicy,
  delete_users: deleteUsers,
  update_policy: updatePolicy,
  approve_activity: approveActivity,
  create_api_keys: createApiKeys,
  create_authenticators: createAuthenticators,
  create_fiat_on_ramp_credential: createFiatOnRampCredential,
  create_read_only_session: createReadOnlySession,
  create_sub_organization: createSubOrganization,
  create_user_tag: createUserTag,
  create_wallet: createWallet,
  create_wallet_accounts: createWalletAccounts,
  delete_api_keys: deleteApiKeys,
  delete_authenticators: deleteAuthenticators,
  delete_wallets: deleteWallets,
  export_wallet: exportWallet,
  export_wallet_account: exportWalletAccount,
  import_wallet: importWallet,
  init_import_wallet: initImportWallet,
  reject_activity: rejectActivity,
  sign_raw_payloads: signRawPayloads,
  sign_raw_payload: signRawPayload,
  sign_transaction: signTransaction,
  update_root_quorum: updateRootQuorum,
  update_user_name: updateUserName,
  update_user_tag: updateUserTag,
  create_oauth_providers: createOauthProviders,
  delete_oauth_providers: deleteOauthProviders,
  update_user_email: updateUserEmail,
  update_user_phone_number: updateUserPhoneNumber,
  delete_sub_organization: deleteSubOrganization,
  create_private_keys: createPrivateKeys,
  export_private_key: exportPrivateKey,
  init_import_private_key: initImportPrivateKey,
  import_private_key: importPrivateKey,
}
