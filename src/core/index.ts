/** `latchkey/core`: the framework-free client. Explicit named exports (see src/exports.test.ts). */

// ---- policies and users ----
export type {
  AccountSpec,
  Activity,
  ActivityStatus,
  AddressFormat,
  ApiKey,
  Authenticator,
  AuthProxySettingsResponse,
  AuthProxySettingsUpdateRequest,
  Curve,
  ErrorCode,
  OAuthMethod,
  OtpType,
  Policy,
  PolicyEffect,
  PolicyEvaluation,
  PolicyParams,
  ProxySettings,
  SessionType,
  SignInMethod,
  SpendingLimit,
  SpendingLimitAsset,
  SpendingLimitParameters,
  SpendingLimitPeriod,
  SpendingLimitScope,
  SpendingLimitWindow,
  User,
  UserParams,
  UserTag,
  Wallet,
  WalletAccount,
} from '@latchkey/protocol'
export { ERROR_CODES } from '@latchkey/protocol'
export type {
  ApproveActivityParameters,
  ApproveActivityReturnType,
} from './actions/activities/approveActivity.ts'
export { approveActivity } from './actions/activities/approveActivity.ts'
export type { CompleteMfaParameters } from './actions/activities/completeMfa.ts'
export { completeMfa } from './actions/activities/completeMfa.ts'
export type {
  ConfirmTotpFactorParameters,
  ConfirmTotpFactorReturnType,
} from './actions/activities/confirmTotpFactor.ts'
export { confirmTotpFactor } from './actions/activities/confirmTotpFactor.ts'
export type { CreateApiKeysParameters, CreateApiKeysReturnType } from './actions/activities/createApiKeys.ts'
export { createApiKeys } from './actions/activities/createApiKeys.ts'
export type {
  CreateAuthenticatorsParameters,
  CreateAuthenticatorsReturnType,
} from './actions/activities/createAuthenticators.ts'
export { createAuthenticators } from './actions/activities/createAuthenticators.ts'
export type {
  CreateFiatOnRampCredentialParameters,
  CreateFiatOnRampCredentialReturnType,
} from './actions/activities/createFiatOnRampCredential.ts'
export { createFiatOnRampCredential } from './actions/activities/createFiatOnRampCredential.ts'
export type {
  CreateMfaPolicyParameters,
  CreateMfaPolicyReturnType,
} from './actions/activities/createMfaPolicy.ts'
export { createMfaPolicy } from './actions/activities/createMfaPolicy.ts'
export type {
  CreatePoliciesParameters,
  CreatePoliciesReturnType,
} from './actions/activities/createPolicies.ts'
export { createPolicies } from './actions/activities/createPolicies.ts'
export type { CreatePolicyParameters, CreatePolicyReturnType } from './actions/activities/createPolicy.ts'
export { createPolicy } from './actions/activities/createPolicy.ts'
export type {
  CreateReadOnlySessionParameters,
  CreateReadOnlySessionReturnType,
} from './actions/activities/createReadOnlySession.ts'
export { createReadOnlySession } from './actions/activities/createReadOnlySession.ts'
export type {
  CreateRecoveryCodesParameters,
  CreateRecoveryCodesReturnType,
} from './actions/activities/createRecoveryCodes.ts'
export { createRecoveryCodes } from './actions/activities/createRecoveryCodes.ts'
export type {
  CreateSpendingLimitParameters,
  CreateSpendingLimitReturnType,
} from './actions/activities/createSpendingLimit.ts'

export { createSpendingLimit } from './actions/activities/createSpendingLimit.ts'
export type {
  CreateSubOrganizationParameters,
  CreateSubOrganizationReturnType,
} from './actions/activities/createSubOrganization.ts'
export { createSubOrganization } from './actions/activities/createSubOrganization.ts'
export type {
  CreateTotpFactorParameters,
  CreateTotpFactorReturnType,
} from './actions/activities/createTotpFactor.ts'
export { createTotpFactor } from './actions/activities/createTotpFactor.ts'
export type { CreateUsersParameters, CreateUsersReturnType } from './actions/activities/createUsers.ts'
export { createUsers } from './actions/activities/createUsers.ts'
export type { CreateUserTagParameters, CreateUserTagReturnType } from './actions/activities/createUserTag.ts'
export { createUserTag } from './actions/activities/createUserTag.ts'
export type { CreateWalletParameters, CreateWalletReturnType } from './actions/activities/createWallet.ts'
export { createWallet } from './actions/activities/createWallet.ts'
export type {
  CreateWalletAccountsParameters,
  CreateWalletAccountsReturnType,
} from './actions/activities/createWalletAccounts.ts'
export { createWalletAccounts } from './actions/activities/createWalletAccounts.ts'
export type { DeleteApiKeysParameters, DeleteApiKeysReturnType } from './actions/activities/deleteApiKeys.ts'
export { deleteApiKeys } from './actions/activities/deleteApiKeys.ts'
export type {
  DeleteAuthenticatorsParameters,
  DeleteAuthenticatorsReturnType,
} from './actions/activities/deleteAuthenticators.ts'
export { deleteAuthenticators } from './actions/activities/deleteAuthenticators.ts'
export type {
  DeleteMfaPolicyParameters,
  DeleteMfaPolicyReturnType,
} from './actions/activities/deleteMfaPolicy.ts'
export { deleteMfaPolicy } from './actions/activities/deleteMfaPolicy.ts'
export type {
  DeletePoliciesParameters,
  DeletePoliciesReturnType,
} from './actions/activities/deletePolicies.ts'
export { deletePolicies } from './actions/activities/deletePolicies.ts'
export type { DeletePolicyParameters, DeletePolicyReturnType } from './actions/activities/deletePolicy.ts'
export { deletePolicy } from './actions/activities/deletePolicy.ts'
export type {
  DeleteSpendingLimitParameters,
  DeleteSpendingLimitReturnType,
} from './actions/activities/deleteSpendingLimit.ts'
export { deleteSpendingLimit } from './actions/activities/deleteSpendingLimit.ts'
export type {
  DeleteTotpFactorParameters,
  DeleteTotpFactorReturnType,
} from './actions/activities/deleteTotpFactor.ts'
export { deleteTotpFactor } from './actions/activities/deleteTotpFactor.ts'
export type { DeleteUsersParameters, DeleteUsersReturnType } from './actions/activities/deleteUsers.ts'
export { deleteUsers } from './actions/activities/deleteUsers.ts'
export type { DeleteWalletsParameters, DeleteWalletsReturnType } from './actions/activities/deleteWallets.ts'
export { deleteWallets } from './actions/activities/deleteWallets.ts'
export type { ExportWalletParameters, ExportWalletReturnType } from './actions/activities/exportWallet.ts'
export { exportWallet } from './actions/activities/exportWallet.ts'
export type {
  ExportWalletAccountParameters,
  ExportWalletAccountReturnType,
} from './actions/activities/exportWalletAccount.ts'
export { exportWalletAccount } from './actions/activities/exportWalletAccount.ts'
export type {
  ExportWalletAccountBundleParameters,
  ExportWalletAccountBundleReturnType,
} from './actions/activities/exportWalletAccountBundle.ts'
export { exportWalletAccountBundle } from './actions/activities/exportWalletAccountBundle.ts'
export type {
  ExportWalletBundleParameters,
  ExportWalletBundleReturnType,
} from './actions/activities/exportWalletBundle.ts'
export { exportWalletBundle } from './actions/activities/exportWalletBundle.ts'
export type {
  GrantAgentAllowanceParameters,
  GrantAgentAllowanceReturnType,
} from './actions/activities/grantAgentAllowance.ts'
export { AGENT_POLICY_NOTE, grantAgentAllowance } from './actions/activities/grantAgentAllowance.ts'
export type { ImportWalletParameters, ImportWalletReturnType } from './actions/activities/importWallet.ts'
export { importWallet } from './actions/activities/importWallet.ts'
export type {
  ImportWalletBundleParameters,
  ImportWalletBundleReturnType,
} from './actions/activities/importWalletBundle.ts'
export { importWalletBundle } from './actions/activities/importWalletBundle.ts'
export type {
  InitImportWalletParameters,
  InitImportWalletReturnType,
} from './actions/activities/initImportWallet.ts'
export { initImportWallet } from './actions/activities/initImportWallet.ts'
export type { InitOtpParameters, InitOtpReturnType } from './actions/activities/initOtp.ts'
export { initOtp } from './actions/activities/initOtp.ts'
// ---- linked logins (issue 38) ----
export type {
  LinkEmailParameters,
  LinkEmailReturnType,
  StartLinkEmailParameters,
  StartLinkEmailReturnType,
} from './actions/activities/linkEmail.ts'
export { linkEmail, startLinkEmail } from './actions/activities/linkEmail.ts'
// ---- linking an OAuth login (issue 38) ----
export type { LinkOAuthParameters, LinkOAuthReturnType } from './actions/activities/linkOAuth.ts'
export { linkOAuth } from './actions/activities/linkOAuth.ts'
export type {
  Oauth2AuthenticateParameters,
  Oauth2AuthenticateReturnType,
} from './actions/activities/oauth2Authenticate.ts'
export { oauth2Authenticate } from './actions/activities/oauth2Authenticate.ts'
export type { OauthLoginParameters, OauthLoginReturnType } from './actions/activities/oauthLogin.ts'
export { oauthLogin } from './actions/activities/oauthLogin.ts'
export type { OtpLoginParameters, OtpLoginReturnType } from './actions/activities/otpLogin.ts'
export { otpLogin } from './actions/activities/otpLogin.ts'
export type {
  RejectActivityParameters,
  RejectActivityReturnType,
} from './actions/activities/rejectActivity.ts'
export { rejectActivity } from './actions/activities/rejectActivity.ts'
export type {
  RevokeAgentAllowanceParameters,
  RevokeAgentAllowanceReturnType,
} from './actions/activities/revokeAgentAllowance.ts'
export { revokeAgentAllowance } from './actions/activities/revokeAgentAllowance.ts'
export type { MfaProof, SatisfyMfaParameters, SatisfyMfaReturnType } from './actions/activities/satisfyMfa.ts'
export { satisfyMfa } from './actions/activities/satisfyMfa.ts'
export type { SendCallsParameters, SendCallsReturnType } from './actions/activities/sendCalls.ts'
export { MAX_CALLS, sendCalls } from './actions/activities/sendCalls.ts'
// ---- e-mail/SMS second factor (issue 38) ----
export type { SendMfaCodeParameters, SendMfaCodeReturnType } from './actions/activities/sendMfaCode.ts'
export { sendMfaCode } from './actions/activities/sendMfaCode.ts'
export type {
  SendRawTransactionParameters,
  SendRawTransactionReturnType,
} from './actions/activities/sendRawTransaction.ts'
export { sendRawTransaction } from './actions/activities/sendRawTransaction.ts'
export type {
  SendEthereumTransactionParameters,
  SendSolanaTransactionParameters,
  SendTransactionParameters,
  SendTransactionReturnType,
} from './actions/activities/sendTransaction.ts'
export { sendTransaction } from './actions/activities/sendTransaction.ts'
// ---- session profiles (issue 37, docs/agents.md) ----
export type {
  CreateSessionProfileParameters,
  CreateSessionProfileReturnType,
  DeleteSessionProfileParameters,
  DeleteSessionProfileReturnType,
  GetSessionProfilesParameters,
  GetSessionProfilesReturnType,
  UpdateSessionProfileParameters,
  UpdateSessionProfileReturnType,
} from './actions/activities/sessionProfiles.ts'
export {
  createSessionProfile,
  deleteSessionProfile,
  getSessionProfiles,
  updateSessionProfile,
} from './actions/activities/sessionProfiles.ts'
export type {
  MessageFormat,
  SignMessageParameters,
  SignMessageReturnType,
} from './actions/activities/signMessage.ts'
export { signMessage } from './actions/activities/signMessage.ts'
export type {
  SignRawPayloadsParameters,
  SignRawPayloadsReturnType,
} from './actions/activities/signRawPayloads.ts'
export { signRawPayloads } from './actions/activities/signRawPayloads.ts'
export type {
  SignTransactionParameters,
  SignTransactionReturnType,
} from './actions/activities/signTransaction.ts'
export { signTransaction } from './actions/activities/signTransaction.ts'
export type {
  SignTypedDataParameters,
  SignTypedDataReturnType,
  TypedData,
} from './actions/activities/signTypedData.ts'
export { signTypedData } from './actions/activities/signTypedData.ts'
export type { StampLoginParameters, StampLoginReturnType } from './actions/activities/stampLogin.ts'
export { stampLogin } from './actions/activities/stampLogin.ts'
export type { UnlinkLoginParameters, UnlinkLoginReturnType } from './actions/activities/unlinkLogin.ts'
export { unlinkLogin } from './actions/activities/unlinkLogin.ts'
export type {
  UpdateMfaPolicyParameters,
  UpdateMfaPolicyReturnType,
} from './actions/activities/updateMfaPolicy.ts'
export { updateMfaPolicy } from './actions/activities/updateMfaPolicy.ts'
export type { UpdatePolicyParameters, UpdatePolicyReturnType } from './actions/activities/updatePolicy.ts'
export { updatePolicy } from './actions/activities/updatePolicy.ts'
export type {
  UpdateSpendingLimitParameters,
  UpdateSpendingLimitReturnType,
} from './actions/activities/updateSpendingLimit.ts'
export { updateSpendingLimit } from './actions/activities/updateSpendingLimit.ts'
export type {
  UpdateUserNameParameters,
  UpdateUserNameReturnType,
} from './actions/activities/updateUserName.ts'
export { updateUserName } from './actions/activities/updateUserName.ts'
export type { UpdateUserTagParameters, UpdateUserTagReturnType } from './actions/activities/updateUserTag.ts'
export { updateUserTag } from './actions/activities/updateUserTag.ts'
export type { VerifyOtpParameters, VerifyOtpReturnType } from './actions/activities/verifyOtp.ts'
export { verifyOtp } from './actions/activities/verifyOtp.ts'
export type {
  CompleteOAuthRedirectParameters,
  CompleteOAuthRedirectReturnType,
} from './actions/auth/completeOAuthRedirect.ts'
export { completeOAuthRedirect } from './actions/auth/completeOAuthRedirect.ts'
export type {
  CompleteOtpSignInParameters,
  CompleteOtpSignInReturnType,
} from './actions/auth/completeOtpSignIn.ts'
export { completeOtpSignIn } from './actions/auth/completeOtpSignIn.ts'
export type {
  DiscoveredEthereumWallet,
  DiscoveredSolanaWallet,
  Eip6963ProviderInfo,
} from './actions/auth/discoverWallets.ts'
export { discoverEthereumWallets, discoverSolanaWallets } from './actions/auth/discoverWallets.ts'
export { loadWalletKitConfig, sessionLifetimeSeconds } from './actions/auth/loadWalletKitConfig.ts'
export type { LogoutParameters, LogoutReturnType } from './actions/auth/logout.ts'
export { logout } from './actions/auth/logout.ts'
export type { OAuthSignInReturnType, PendingOAuth } from './actions/auth/oauthShared.ts'
// wave 10: a popup opened during a click, for linking a login after a blocked popup
export { openOAuthPopup, type ReservedOAuthPopup, reserveOAuthPopup } from './actions/auth/openOAuthPopup.ts'
export { hasPendingOAuth } from './actions/auth/pendingOAuth.ts'
export type { RefreshSessionParameters, RefreshSessionReturnType } from './actions/auth/refreshSession.ts'
export { refreshSession } from './actions/auth/refreshSession.ts'
export type { SignInWithOAuthParameters, SignInWithOAuthReturnType } from './actions/auth/signInWithOAuth.ts'
export { signInWithOAuth } from './actions/auth/signInWithOAuth.ts'
export type {
  SignInWithPasskeyParameters,
  SignInWithPasskeyReturnType,
} from './actions/auth/signInWithPasskey.ts'
export { signInWithPasskey } from './actions/auth/signInWithPasskey.ts'
export type {
  ExternalWallet,
  SignInWithWalletParameters,
  SignInWithWalletReturnType,
} from './actions/auth/signInWithWallet.ts'
export { signInWithWallet } from './actions/auth/signInWithWallet.ts'
export type {
  SignUpWithPasskeyParameters,
  SignUpWithPasskeyReturnType,
} from './actions/auth/signUpWithPasskey.ts'
export { signUpWithPasskey } from './actions/auth/signUpWithPasskey.ts'
export type { StartOtpSignInParameters, StartOtpSignInReturnType } from './actions/auth/startOtpSignIn.ts'
export { startOtpSignIn } from './actions/auth/startOtpSignIn.ts'
export type { ActionOptions } from './actions/options.ts'
export type { GetAccountParameters, GetAccountReturnType } from './actions/proxy/getAccount.ts'
export { getAccount } from './actions/proxy/getAccount.ts'
export type {
  GetWalletKitConfigParameters,
  GetWalletKitConfigReturnType,
} from './actions/proxy/getWalletKitConfig.ts'
export { getWalletKitConfig } from './actions/proxy/getWalletKitConfig.ts'
export type {
  ProxyOAuth2AuthenticateParameters,
  ProxyOAuth2AuthenticateReturnType,
} from './actions/proxy/proxyOAuth2Authenticate.ts'
export { proxyOAuth2Authenticate } from './actions/proxy/proxyOAuth2Authenticate.ts'
export type { ProxyOAuthLoginParameters, ProxyOAuthLoginReturnType } from './actions/proxy/proxyOAuthLogin.ts'
export { proxyOAuthLogin } from './actions/proxy/proxyOAuthLogin.ts'
export type { ProxyOtpInitParameters, ProxyOtpInitReturnType } from './actions/proxy/proxyOtpInit.ts'
export { proxyOtpInit } from './actions/proxy/proxyOtpInit.ts'
export type { ProxyOtpLoginParameters, ProxyOtpLoginReturnType } from './actions/proxy/proxyOtpLogin.ts'
export { proxyOtpLogin } from './actions/proxy/proxyOtpLogin.ts'
export type { ProxyOtpVerifyParameters, ProxyOtpVerifyReturnType } from './actions/proxy/proxyOtpVerify.ts'
export { proxyOtpVerify } from './actions/proxy/proxyOtpVerify.ts'
export type { ProxySignupParameters, ProxySignupReturnType } from './actions/proxy/proxySignup.ts'
export { proxySignup } from './actions/proxy/proxySignup.ts'
export type { GetActivityParameters, GetActivityReturnType } from './actions/queries/getActivity.ts'
export { getActivity } from './actions/queries/getActivity.ts'
export type { GetApiKeysParameters, GetApiKeysReturnType } from './actions/queries/getApiKeys.ts'
export { getApiKeys } from './actions/queries/getApiKeys.ts'
export type {
  GetAuthenticatorParameters,
  GetAuthenticatorReturnType,
} from './actions/queries/getAuthenticator.ts'
export { getAuthenticator } from './actions/queries/getAuthenticator.ts'
export type {
  CallsStatus,
  GetCallsStatusParameters,
  GetCallsStatusReturnType,
} from './actions/queries/getCallsStatus.ts'
export { callsStatusOf, getCallsStatus } from './actions/queries/getCallsStatus.ts'
export type {
  GetLinkedLoginsParameters,
  GetLinkedLoginsReturnType,
  LinkedLogin,
} from './actions/queries/getLinkedLogins.ts'
export { getLinkedLogins, linkedLoginsOf } from './actions/queries/getLinkedLogins.ts'
export type { GetMfaFactorsParameters, GetMfaFactorsReturnType } from './actions/queries/getMfaFactors.ts'
export { getMfaFactors } from './actions/queries/getMfaFactors.ts'
export type { GetMfaPoliciesParameters, GetMfaPoliciesReturnType } from './actions/queries/getMfaPolicies.ts'
export { getMfaPolicies } from './actions/queries/getMfaPolicies.ts'
export type { GetMfaStatusParameters, GetMfaStatusReturnType } from './actions/queries/getMfaStatus.ts'
export { getMfaStatus } from './actions/queries/getMfaStatus.ts'
export type { GetPoliciesParameters, GetPoliciesReturnType } from './actions/queries/getPolicies.ts'
export { getPolicies } from './actions/queries/getPolicies.ts'
export type { GetPolicyParameters, GetPolicyReturnType } from './actions/queries/getPolicy.ts'
export { getPolicy } from './actions/queries/getPolicy.ts'
export type {
  GetPolicyEvaluationsParameters,
  GetPolicyEvaluationsReturnType,
} from './actions/queries/getPolicyEvaluations.ts'
export { getPolicyEvaluations } from './actions/queries/getPolicyEvaluations.ts'
export type {
  GetSendCapabilitiesParameters,
  GetSendCapabilitiesReturnType,
} from './actions/queries/getSendCapabilities.ts'
export { getSendCapabilities } from './actions/queries/getSendCapabilities.ts'
export type {
  GetSpendingLimitsParameters,
  GetSpendingLimitsReturnType,
} from './actions/queries/getSpendingLimits.ts'
export { getSpendingLimits } from './actions/queries/getSpendingLimits.ts'
export type {
  GetSubOrganizationsParameters,
  GetSubOrganizationsReturnType,
} from './actions/queries/getSubOrganizations.ts'
export { getSubOrganizations } from './actions/queries/getSubOrganizations.ts'
export type { GetUserParameters, GetUserReturnType } from './actions/queries/getUser.ts'
export { getUser } from './actions/queries/getUser.ts'
export type { GetUsersParameters, GetUsersReturnType } from './actions/queries/getUsers.ts'
export { getUsers } from './actions/queries/getUsers.ts'
export type { GetUserTagsParameters, GetUserTagsReturnType } from './actions/queries/getUserTags.ts'
export { getUserTags } from './actions/queries/getUserTags.ts'
export type { GetWalletParameters, GetWalletReturnType } from './actions/queries/getWallet.ts'
export { getWallet } from './actions/queries/getWallet.ts'
export type {
  GetWalletAccountsParameters,
  GetWalletAccountsReturnType,
} from './actions/queries/getWalletAccounts.ts'
export { getWalletAccounts } from './actions/queries/getWalletAccounts.ts'
export type { GetWalletsParameters, GetWalletsReturnType } from './actions/queries/getWallets.ts'
export { getWallets } from './actions/queries/getWallets.ts'
export type { GetWhoamiParameters, GetWhoamiReturnType } from './actions/queries/getWhoami.ts'
export { getWhoami } from './actions/queries/getWhoami.ts'
export { verifySignedBundle } from './bundles/verifySignedBundle.ts'
export type { Chain } from './chains.ts'
export { accountSpecOf, accountSpecsOf, CHAINS, DEFAULT_CHAINS } from './chains.ts'
export type {
  Latchkey,
  LatchkeyConfig,
  LatchkeyConfigParameter,
  OpenAuthorizationWindow,
  ResolvedLatchkeyConfig,
} from './createLatchkey.ts'
export { createLatchkey } from './createLatchkey.ts'
export type { LatchkeyErrorOptions, MfaStep } from './errors.ts'
export {
  AbortedError,
  ActivityError,
  ActivityFailedError,
  ActivityRejectedError,
  BundleMismatchError,
  BundleSignatureInvalidError,
  CallsStatusTimeoutError,
  ConfigInvalidError,
  ConsensusNeededError,
  fromErrorBody,
  isSessionKeyRejected,
  KeyNotFoundError,
  KeyStoreUnavailableError,
  LatchkeyError,
  MfaRequiredError,
  NetworkError,
  NotSignedInError,
  OAuthStateMismatchError,
  PollTimeoutError,
  PopupBlockedError,
  ServiceError,
  SessionExpiredError,
  SpendingLimitExceededError,
  TimeoutError,
  thenOrResume,
  UserCancelledError,
  WalletUnavailableError,
} from './errors.ts'
export type { KeyStore, KeyStoreOption, StoredKey } from './keyStore/createKeyStore.ts'
export {
  createIndexedDbKeyStore,
  createKeyStore,
  createMemoryKeyStore,
  generateSigningKey,
} from './keyStore/createKeyStore.ts'
export { importSigningKey } from './keyStore/importSigningKey.ts'
export { approveActivityMutationOptions } from './query/approveActivity.ts'
export { completeMfaMutationOptions } from './query/completeMfa.ts'
export { completeOtpSignInMutationOptions } from './query/completeOtpSignIn.ts'
export { confirmTotpFactorMutationOptions } from './query/confirmTotpFactor.ts'
export { createApiKeysMutationOptions } from './query/createApiKeys.ts'
export { createAuthenticatorsMutationOptions } from './query/createAuthenticators.ts'
export { createFiatOnRampCredentialMutationOptions } from './query/createFiatOnRampCredential.ts'
export { createMfaPolicyMutationOptions } from './query/createMfaPolicy.ts'
export { createPoliciesMutationOptions } from './query/createPolicies.ts'
export { createPolicyMutationOptions } from './query/createPolicy.ts'
export { createReadOnlySessionMutationOptions } from './query/createReadOnlySession.ts'
export { createRecoveryCodesMutationOptions } from './query/createRecoveryCodes.ts'
export { createSpendingLimitMutationOptions } from './query/createSpendingLimit.ts'
export { createSubOrganizationMutationOptions } from './query/createSubOrganization.ts'
export { createTotpFactorMutationOptions } from './query/createTotpFactor.ts'
export { createUsersMutationOptions } from './query/createUsers.ts'
export { createUserTagMutationOptions } from './query/createUserTag.ts'
export { createWalletMutationOptions } from './query/createWallet.ts'
export { createWalletAccountsMutationOptions } from './query/createWalletAccounts.ts'
export { deleteApiKeysMutationOptions } from './query/deleteApiKeys.ts'
export { deleteAuthenticatorsMutationOptions } from './query/deleteAuthenticators.ts'
export { deleteMfaPolicyMutationOptions } from './query/deleteMfaPolicy.ts'
export { deletePoliciesMutationOptions } from './query/deletePolicies.ts'
export { deletePolicyMutationOptions } from './query/deletePolicy.ts'
export { deleteSpendingLimitMutationOptions } from './query/deleteSpendingLimit.ts'
export { deleteTotpFactorMutationOptions } from './query/deleteTotpFactor.ts'
export { deleteUsersMutationOptions } from './query/deleteUsers.ts'
export { deleteWalletsMutationOptions } from './query/deleteWallets.ts'
export { exportWalletMutationOptions } from './query/exportWallet.ts'
export { exportWalletAccountMutationOptions } from './query/exportWalletAccount.ts'
export type { GetActivityQueryKey, GetActivityQueryParameters } from './query/getActivity.ts'
export { getActivityQueryKey, getActivityQueryOptions } from './query/getActivity.ts'
export type { GetApiKeysQueryKey, GetApiKeysQueryParameters } from './query/getApiKeys.ts'
export { getApiKeysQueryKey, getApiKeysQueryOptions } from './query/getApiKeys.ts'
export type { GetAuthenticatorQueryKey, GetAuthenticatorQueryParameters } from './query/getAuthenticator.ts'
export { getAuthenticatorQueryKey, getAuthenticatorQueryOptions } from './query/getAuthenticator.ts'
export type { GetCallsStatusQueryKey, GetCallsStatusQueryParameters } from './query/getCallsStatus.ts'
export { getCallsStatusQueryKey, getCallsStatusQueryOptions } from './query/getCallsStatus.ts'
// issue 38: linked logins
export type { GetLinkedLoginsQueryKey, GetLinkedLoginsQueryParameters } from './query/getLinkedLogins.ts'
export { getLinkedLoginsQueryKey, getLinkedLoginsQueryOptions } from './query/getLinkedLogins.ts'
export type { GetMfaFactorsQueryKey, GetMfaFactorsQueryParameters } from './query/getMfaFactors.ts'
export { getMfaFactorsQueryKey, getMfaFactorsQueryOptions } from './query/getMfaFactors.ts'
export type { GetMfaPoliciesQueryKey, GetMfaPoliciesQueryParameters } from './query/getMfaPolicies.ts'
export { getMfaPoliciesQueryKey, getMfaPoliciesQueryOptions } from './query/getMfaPolicies.ts'
export type { GetPoliciesQueryKey, GetPoliciesQueryParameters } from './query/getPolicies.ts'
export { getPoliciesQueryKey, getPoliciesQueryOptions } from './query/getPolicies.ts'
export type { GetPolicyQueryKey, GetPolicyQueryParameters } from './query/getPolicy.ts'
export { getPolicyQueryKey, getPolicyQueryOptions } from './query/getPolicy.ts'
export type {
  GetPolicyEvaluationsQueryKey,
  GetPolicyEvaluationsQueryParameters,
} from './query/getPolicyEvaluations.ts'
export {
  getPolicyEvaluationsQueryKey,
  getPolicyEvaluationsQueryOptions,
} from './query/getPolicyEvaluations.ts'
export type {
  GetSpendingLimitsQueryKey,
  GetSpendingLimitsQueryParameters,
} from './query/getSpendingLimits.ts'
export { getSpendingLimitsQueryKey, getSpendingLimitsQueryOptions } from './query/getSpendingLimits.ts'
export type {
  GetSubOrganizationsQueryKey,
  GetSubOrganizationsQueryParameters,
} from './query/getSubOrganizations.ts'
export { getSubOrganizationsQueryKey, getSubOrganizationsQueryOptions } from './query/getSubOrganizations.ts'
export type { GetUserQueryParameters } from './query/getUser.ts'
export { getUserQueryKey, getUserQueryOptions } from './query/getUser.ts'
export type { GetUsersQueryKey, GetUsersQueryParameters } from './query/getUsers.ts'
export { getUsersQueryKey, getUsersQueryOptions } from './query/getUsers.ts'
export type { GetUserTagsQueryKey, GetUserTagsQueryParameters } from './query/getUserTags.ts'
export { getUserTagsQueryKey, getUserTagsQueryOptions } from './query/getUserTags.ts'
export type { GetWalletQueryKey, GetWalletQueryParameters } from './query/getWallet.ts'
export { getWalletQueryKey, getWalletQueryOptions } from './query/getWallet.ts'
export type {
  GetWalletAccountsQueryKey,
  GetWalletAccountsQueryParameters,
} from './query/getWalletAccounts.ts'
export { getWalletAccountsQueryKey, getWalletAccountsQueryOptions } from './query/getWalletAccounts.ts'
export { getWalletKitConfigQueryKey, getWalletKitConfigQueryOptions } from './query/getWalletKitConfig.ts'
export type { GetWalletsQueryKey, GetWalletsQueryParameters } from './query/getWallets.ts'
export { getWalletsQueryKey, getWalletsQueryOptions } from './query/getWallets.ts'
export type { GetWhoamiQueryKey, GetWhoamiQueryParameters } from './query/getWhoami.ts'
export { getWhoamiQueryKey, getWhoamiQueryOptions } from './query/getWhoami.ts'
export { grantAgentAllowanceMutationOptions } from './query/grantAgentAllowance.ts'
export { importWalletMutationOptions } from './query/importWallet.ts'
export { linkEmailMutationOptions, startLinkEmailMutationOptions } from './query/linkEmail.ts'
export { linkOAuthMutationOptions } from './query/linkOAuth.ts'
export { logoutMutationOptions } from './query/logout.ts'
export { refreshSessionMutationOptions } from './query/refreshSession.ts'
export { rejectActivityMutationOptions } from './query/rejectActivity.ts'
export { revokeAgentAllowanceMutationOptions } from './query/revokeAgentAllowance.ts'
export { sendCallsMutationOptions } from './query/sendCalls.ts'
export { sendMfaCodeMutationOptions } from './query/sendMfaCode.ts'
export { sendRawTransactionMutationOptions } from './query/sendRawTransaction.ts'
export { sendTransactionMutationOptions } from './query/sendTransaction.ts'
export { signInWithOAuthMutationOptions } from './query/signInWithOAuth.ts'
export { signInWithPasskeyMutationOptions } from './query/signInWithPasskey.ts'
export { signInWithWalletMutationOptions } from './query/signInWithWallet.ts'
export { signMessageMutationOptions } from './query/signMessage.ts'
export { signRawPayloadsMutationOptions } from './query/signRawPayloads.ts'
export { signTransactionMutationOptions } from './query/signTransaction.ts'
export { signTypedDataMutationOptions } from './query/signTypedData.ts'
export { signUpWithPasskeyMutationOptions } from './query/signUpWithPasskey.ts'
export { startOtpSignInMutationOptions } from './query/startOtpSignIn.ts'
export { unlinkLoginMutationOptions } from './query/unlinkLogin.ts'
export { updateMfaPolicyMutationOptions } from './query/updateMfaPolicy.ts'
export { updatePolicyMutationOptions } from './query/updatePolicy.ts'
export { updateSpendingLimitMutationOptions } from './query/updateSpendingLimit.ts'
export { updateUserNameMutationOptions } from './query/updateUserName.ts'
export { updateUserTagMutationOptions } from './query/updateUserTag.ts'
export type { LatchkeyMutationMeta, QueryName } from './query/utils.ts'
export { keyParameters, QUERY_SCOPE, queryKeyOf, sessionScope } from './query/utils.ts'
export type { PendingOtp, PendingOtpState, PendingOtpStore } from './session/createPendingOtpStore.ts'
export type { SessionStore } from './session/createSessionStore.ts'
export { createSessionStore } from './session/createSessionStore.ts'
export type { LatchkeyStorage } from './session/persistence.ts'
export { SESSIONS_STORAGE_VERSION, sessionsStorageKey } from './session/persistence.ts'
export type { ClientStatus, SessionEvent, SessionStatus } from './session/sessionMachine.ts'
export { isUsable, sessionTransition } from './session/sessionMachine.ts'
export type { GetSessionParameters, SwitchSessionParameters } from './session/sessions.ts'
export {
  addSessionFromKey,
  getActiveSession,
  getSession,
  getSessionStatus,
  requireSession,
  switchSession,
} from './session/sessions.ts'
export type { Session, SessionState, SessionTokens, SignInMethodUsed } from './session/types.ts'
export { apiKeyStamper } from './stampers/apiKeyStamper.ts'
export { clientSignature } from './stampers/clientSignature.ts'
export type { Stamp, Stamper } from './stampers/types.ts'
export type { Eip1193Provider, SolanaWallet, WalletStamper } from './stampers/walletStampers.ts'
export { ethereumWalletStamper, solanaWalletStamper } from './stampers/walletStampers.ts'
export type { WebAuthnStamperParameters } from './stampers/webAuthnStamper.ts'
export { webAuthnError, webAuthnStamper } from './stampers/webAuthnStamper.ts'
export type { RequestOptions, SubmitOptions, SubmitReturnType } from './transport/activity.ts'
export { proxy, query, submit, submitActivity } from './transport/activity.ts'
export type { FetchFn, HttpRequestParameters } from './transport/http.ts'
export { httpRequest } from './transport/http.ts'
