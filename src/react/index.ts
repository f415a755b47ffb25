/** React bindings: `<LatchkeyProvider>` and the hooks (explicit named exports; see src/exports.test.ts). */

export { SpendingLimitExceededError } from '../core/errors.ts'
export type {
  AccountSpec,
  ActionOptions,
  Activity,
  ActivityStatus,
  AddressFormat,
  ApiKey,
  ApproveActivityParameters,
  ApproveActivityReturnType,
  Authenticator,
  CallsStatus,
  Chain,
  ClientStatus,
  CompleteMfaParameters,
  CompleteOAuthRedirectParameters,
  CompleteOAuthRedirectReturnType,
  CompleteOtpSignInParameters,
  CompleteOtpSignInReturnType,
  ConfirmTotpFactorParameters,
  ConfirmTotpFactorReturnType,
  CreateApiKeysParameters,
  CreateApiKeysReturnType,
  CreateAuthenticatorsParameters,
  CreateAuthenticatorsReturnType,
  CreateFiatOnRampCredentialParameters,
  CreateFiatOnRampCredentialReturnType,
  CreateMfaPolicyParameters,
  CreateMfaPolicyReturnType,
  CreatePoliciesParameters,
  CreatePoliciesReturnType,
  CreatePolicyParameters,
  CreatePolicyReturnType,
  CreateReadOnlySessionParameters,
  CreateReadOnlySessionReturnType,
  CreateRecoveryCodesParameters,
  CreateRecoveryCodesReturnType,
  CreateSubOrganizationParameters,
  CreateSubOrganizationReturnType,
  CreateTotpFactorParameters,
  CreateTotpFactorReturnType,
  CreateUsersParameters,
  CreateUsersReturnType,
  CreateUserTagParameters,
  CreateUserTagReturnType,
  CreateWalletAccountsParameters,
  CreateWalletAccountsReturnType,
  CreateWalletParameters,
  CreateWalletReturnType,
  Curve,
  DeleteApiKeysParameters,
  DeleteApiKeysReturnType,
  DeleteAuthenticatorsParameters,
  DeleteAuthenticatorsReturnType,
  DeleteMfaPolicyParameters,
  DeleteMfaPolicyReturnType,
  DeletePoliciesParameters,
  DeletePoliciesReturnType,
  DeletePolicyParameters,
  DeletePolicyReturnType,
  DeleteTotpFactorParameters,
  DeleteTotpFactorReturnType,
  DeleteUsersParameters,
  DeleteUsersReturnType,
  DeleteWalletsParameters,
  DeleteWalletsReturnType,
  DiscoveredEthereumWallet,
  DiscoveredSolanaWallet,
  Eip1193Provider,
  Eip6963ProviderInfo,
  ErrorCode,
  ExportWalletAccountBundleParameters,
  ExportWalletAccountBundleReturnType,
  ExportWalletAccountParameters,
  ExportWalletAccountReturnType,
  ExportWalletBundleParameters,
  ExportWalletBundleReturnType,
  ExportWalletParameters,
  ExportWalletReturnType,
  ExternalWallet,
  FetchFn,
  GetAccountParameters,
  GetAccountReturnType,
  GetActivityParameters,
  GetActivityQueryKey,
  GetActivityQueryParameters,
  GetActivityReturnType,
  GetApiKeysParameters,
  GetApiKeysQueryKey,
  GetApiKeysQueryParameters,
  GetApiKeysReturnType,
  GetAuthenticatorParameters,
  GetAuthenticatorQueryKey,
  GetAuthenticatorQueryParameters,
  GetAuthenticatorReturnType,
  GetCallsStatusReturnType,
  GetMfaFactorsReturnType,
  GetMfaPoliciesReturnType,
  GetPoliciesParameters,
  GetPoliciesQueryKey,
  GetPoliciesQueryParameters,
  GetPoliciesReturnType,
  GetPolicyEvaluationsParameters,
  GetPolicyEvaluationsQueryKey,
  GetPolicyEvaluationsQueryParameters,
  GetPolicyEvaluationsReturnType,
  GetPolicyParameters,
  GetPolicyQueryKey,
  GetPolicyQueryParameters,
  GetPolicyReturnType,
  GetSubOrganizationsParameters,
  GetSubOrganizationsQueryKey,
  GetSubOrganizationsQueryParameters,
  GetSubOrganizationsReturnType,
  GetUserParameters,
  GetUserQueryParameters,
  GetUserReturnType,
  GetUsersParameters,
  GetUsersQueryKey,
  GetUsersQueryParameters,
  GetUsersReturnType,
  GetUserTagsParameters,
  GetUserTagsQueryKey,
  GetUserTagsQueryParameters,
  GetUserTagsReturnType,
  GetWalletAccountsParameters,
  GetWalletAccountsQueryKey,
  GetWalletAccountsQueryParameters,
  GetWalletAccountsReturnType,
  GetWalletKitConfigParameters,
  GetWalletKitConfigReturnType,
  GetWalletParameters,
  GetWalletQueryKey,
  GetWalletQueryParameters,
  GetWalletReturnType,
  GetWalletsParameters,
  GetWalletsQueryKey,
  GetWalletsQueryParameters,
  GetWalletsReturnType,
  GetWhoamiParameters,
  GetWhoamiQueryKey,
  GetWhoamiQueryParameters,
  GetWhoamiReturnType,
  HttpRequestParameters,
  ImportWalletBundleParameters,
  ImportWalletBundleReturnType,
  ImportWalletParameters,
  ImportWalletReturnType,
  InitImportWalletParameters,
  InitImportWalletReturnType,
  InitOtpParameters,
  InitOtpReturnType,
  KeyStore,
  KeyStoreOption,
  Latchkey,
  LatchkeyConfig,
  LatchkeyConfigParameter,
  LatchkeyErrorOptions,
  LatchkeyMutationMeta,
  LatchkeyStorage,
  LogoutParameters,
  LogoutReturnType,
  MfaProof,
  MfaStep,
  OAuthMethod,
  OAuthSignInReturnType,
  Oauth2AuthenticateParameters,
  Oauth2AuthenticateReturnType,
  OauthLoginParameters,
  OauthLoginReturnType,
  OpenAuthorizationWindow,
  OtpLoginParameters,
  OtpLoginReturnType,
  OtpType,
  PendingOAuth,
  Policy,
  PolicyEffect,
  PolicyEvaluation,
  PolicyParams,
  ProxyOAuth2AuthenticateParameters,
  ProxyOAuth2AuthenticateReturnType,
  ProxyOAuthLoginParameters,
  ProxyOAuthLoginReturnType,
  ProxyOtpInitParameters,
  ProxyOtpInitReturnType,
  ProxyOtpLoginParameters,
  ProxyOtpLoginReturnType,
  ProxyOtpVerifyParameters,
  ProxyOtpVerifyReturnType,
  ProxySignupParameters,
  ProxySignupReturnType,
  QueryName,
  RefreshSessionParameters,
  RefreshSessionReturnType,
  RejectActivityParameters,
  RejectActivityReturnType,
  RequestOptions,
  ResolvedLatchkeyConfig,
  SendCallsParameters,
  SendCallsReturnType,
  SendRawTransactionParameters,
  SendRawTransactionReturnType,
  SendTransactionParameters,
  SendTransactionReturnType,
  Session,
  SessionEvent,
  SessionState,
  SessionStore,
  SessionTokens,
  SessionType,
  SignInMethod,
  SignInMethodUsed,
  SignInWithOAuthParameters,
  SignInWithOAuthReturnType,
  SignInWithPasskeyParameters,
  SignInWithPasskeyReturnType,
  SignInWithWalletParameters,
  SignInWithWalletReturnType,
  SignMessageParameters,
  SignMessageReturnType,
  SignRawPayloadsParameters,
  SignRawPayloadsReturnType,
  SignTypedDataParameters,
  SignTypedDataReturnType,
  SignUpWithPasskeyParameters,
  SignUpWithPasskeyReturnType,
  SolanaWallet,
  Stamp,
  Stamper,
  StampLoginParameters,
  StampLoginReturnType,
  StartOtpSignInParameters,
  StartOtpSignInReturnType,
  StoredKey,
  SubmitOptions,
  SubmitReturnType,
  SwitchSessionParameters,
  TypedData,
  UpdateMfaPolicyParameters,
  UpdateMfaPolicyReturnType,
  UpdatePolicyParameters,
  UpdatePolicyReturnType,
  UpdateUserNameParameters,
  UpdateUserNameReturnType,
  UpdateUserTagParameters,
  UpdateUserTagReturnType,
  User,
  UserParams,
  UserTag,
  VerifyOtpParameters,
  VerifyOtpReturnType,
  Wallet,
  WalletAccount,
  WalletStamper,
  WebAuthnStamperParameters,
} from '../core/index.ts'
// The framework-free client's values apps commonly need beside the hooks, and all its types.
export {
  ConsensusNeededError,
  createLatchkey,
  ERROR_CODES,
  LatchkeyError,
  MfaRequiredError,
  NotSignedInError,
  SessionExpiredError,
} from '../core/index.ts'
export { LatchkeyProviderNotFoundError } from './errors.ts'
export type { ClientParameter, MutationParameter, QueryParameter } from './hooks/internal.ts'
export type { UseActivityParameters, UseActivityReturnType } from './hooks/useActivity.ts'
export { useActivity } from './hooks/useActivity.ts'
export type { UseAddPasskeyParameters, UseAddPasskeyReturnType } from './hooks/useAddPasskey.ts'
export { useAddPasskey } from './hooks/useAddPasskey.ts'
export type { UseApiKeysParameters, UseApiKeysReturnType } from './hooks/useApiKeys.ts'
export { useApiKeys } from './hooks/useApiKeys.ts'
export type {
  UseApproveActivityParameters,
  UseApproveActivityReturnType,
} from './hooks/useApproveActivity.ts'
export { useApproveActivity } from './hooks/useApproveActivity.ts'
export type { UseAuthenticatorParameters, UseAuthenticatorReturnType } from './hooks/useAuthenticator.ts'
export { useAuthenticator } from './hooks/useAuthenticator.ts'
export type { UseCallsStatusParameters, UseCallsStatusReturnType } from './hooks/useCallsStatus.ts'
export { useCallsStatus } from './hooks/useCallsStatus.ts'
export type { UseCompleteMfaParameters, UseCompleteMfaReturnType } from './hooks/useCompleteMfa.ts'
export { useCompleteMfa } from './hooks/useCompleteMfa.ts'
export type {
  UseConfirmTotpFactorParameters,
  UseConfirmTotpFactorReturnType,
} from './hooks/useConfirmTotpFactor.ts'
export { useConfirmTotpFactor } from './hooks/useConfirmTotpFactor.ts'
export type { UseCreateApiKeysParameters, UseCreateApiKeysReturnType } from './hooks/useCreateApiKeys.ts'
export { useCreateApiKeys } from './hooks/useCreateApiKeys.ts'
export type {
  UseCreateAuthenticatorsParameters,
  UseCreateAuthenticatorsReturnType,
} from './hooks/useCreateAuthenticators.ts'
export { useCreateAuthenticators } from './hooks/useCreateAuthenticators.ts'
export type {
  UseCreateFiatOnRampCredentialParameters,
  UseCreateFiatOnRampCredentialReturnType,
} from './hooks/useCreateFiatOnRampCredential.ts'
export { useCreateFiatOnRampCredential } from './hooks/useCreateFiatOnRampCredential.ts'
export type {
  UseCreateMfaPolicyParameters,
  UseCreateMfaPolicyReturnType,
} from './hooks/useCreateMfaPolicy.ts'
export { useCreateMfaPolicy } from './hooks/useCreateMfaPolicy.ts'
export type { UseCreatePoliciesParameters, UseCreatePoliciesReturnType } from './hooks/useCreatePolicies.ts'
export { useCreatePolicies } from './hooks/useCreatePolicies.ts'
export type { UseCreatePolicyParameters, UseCreatePolicyReturnType } from './hooks/useCreatePolicy.ts'
export { useCreatePolicy } from './hooks/useCreatePolicy.ts'
export type {
  UseCreateReadOnlySessionParameters,
  UseCreateReadOnlySessionReturnType,
} from './hooks/useCreateReadOnlySession.ts'
export { useCreateReadOnlySession } from './hooks/useCreateReadOnlySession.ts'
export type {
  UseCreateRecoveryCodesParameters,
  UseCreateRecoveryCodesReturnType,
} from './hooks/useCreateRecoveryCodes.ts'
export { useCreateRecoveryCodes } from './hooks/useCreateRecoveryCodes.ts'
export type {
  UseCreateSpendingLimitParameters,
  UseCreateSpendingLimitReturnType,
} from './hooks/useCreateSpendingLimit.ts'

export { useCreateSpendingLimit } from './hooks/useCreateSpendingLimit.ts'
export type {
  UseCreateSubOrganizationParameters,
  UseCreateSubOrganizationReturnType,
} from './hooks/useCreateSubOrganization.ts'
export { useCreateSubOrganization } from './hooks/useCreateSubOrganization.ts'
export type {
  UseCreateTotpFactorParameters,
  UseCreateTotpFactorReturnType,
} from './hooks/useCreateTotpFactor.ts'
export { useCreateTotpFactor } from './hooks/useCreateTotpFactor.ts'
export type { UseCreateUsersParameters, UseCreateUsersReturnType } from './hooks/useCreateUsers.ts'
export { useCreateUsers } from './hooks/useCreateUsers.ts'
export type { UseCreateUserTagParameters, UseCreateUserTagReturnType } from './hooks/useCreateUserTag.ts'
export { useCreateUserTag } from './hooks/useCreateUserTag.ts'
export type { UseCreateWalletParameters, UseCreateWalletReturnType } from './hooks/useCreateWallet.ts'
export { useCreateWallet } from './hooks/useCreateWallet.ts'
export type {
  UseCreateWalletAccountsParameters,
  UseCreateWalletAccountsReturnType,
} from './hooks/useCreateWalletAccounts.ts'
export { useCreateWalletAccounts } from './hooks/useCreateWalletAccounts.ts'
export type { UseDeleteApiKeysParameters, UseDeleteApiKeysReturnType } from './hooks/useDeleteApiKeys.ts'
export { useDeleteApiKeys } from './hooks/useDeleteApiKeys.ts'
export type {
  UseDeleteMfaPolicyParameters,
  UseDeleteMfaPolicyReturnType,
} from './hooks/useDeleteMfaPolicy.ts'
export { useDeleteMfaPolicy } from './hooks/useDeleteMfaPolicy.ts'
export type { UseDeletePoliciesParameters, UseDeletePoliciesReturnType } from './hooks/useDeletePolicies.ts'
export { useDeletePolicies } from './hooks/useDeletePolicies.ts'
export type { UseDeletePolicyParameters, UseDeletePolicyReturnType } from './hooks/useDeletePolicy.ts'
export { useDeletePolicy } from './hooks/useDeletePolicy.ts'
export type {
  UseDeleteSpendingLimitParameters,
  UseDeleteSpendingLimitReturnType,
} from './hooks/useDeleteSpendingLimit.ts'
export { useDeleteSpendingLimit } from './hooks/useDeleteSpendingLimit.ts'
export type {
  UseDeleteTotpFactorParameters,
  UseDeleteTotpFactorReturnType,
} from './hooks/useDeleteTotpFactor.ts'
export { useDeleteTotpFactor } from './hooks/useDeleteTotpFactor.ts'
export type { UseDeleteUsersParameters, UseDeleteUsersReturnType } from './hooks/useDeleteUsers.ts'
export { useDeleteUsers } from './hooks/useDeleteUsers.ts'
export type { UseDeleteWalletsParameters, UseDeleteWalletsReturnType } from './hooks/useDeleteWallets.ts'
export { useDeleteWallets } from './hooks/useDeleteWallets.ts'
export type { DiscoveredWallets, UseDiscoverWalletsReturnType } from './hooks/useDiscoverWallets.ts'
export { useDiscoverWallets } from './hooks/useDiscoverWallets.ts'
export type { UseExportWalletParameters, UseExportWalletReturnType } from './hooks/useExportWallet.ts'
export { useExportWallet } from './hooks/useExportWallet.ts'
export type {
  UseExportWalletAccountParameters,
  UseExportWalletAccountReturnType,
} from './hooks/useExportWalletAccount.ts'
export { useExportWalletAccount } from './hooks/useExportWalletAccount.ts'
export type {
  UseExportWalletAccountBundleParameters,
  UseExportWalletAccountBundleReturnType,
} from './hooks/useExportWalletAccountBundle.ts'
export { useExportWalletAccountBundle } from './hooks/useExportWalletAccountBundle.ts'
export type {
  UseExportWalletBundleParameters,
  UseExportWalletBundleReturnType,
} from './hooks/useExportWalletBundle.ts'
export { useExportWalletBundle } from './hooks/useExportWalletBundle.ts'
export type {
  UseGrantAgentAllowanceParameters,
  UseGrantAgentAllowanceReturnType,
} from './hooks/useGrantAgentAllowance.ts'
export { useGrantAgentAllowance } from './hooks/useGrantAgentAllowance.ts'
export type { UseImportWalletParameters, UseImportWalletReturnType } from './hooks/useImportWallet.ts'
export { useImportWallet } from './hooks/useImportWallet.ts'
export type {
  UseImportWalletBundleParameters,
  UseImportWalletBundleReturnType,
} from './hooks/useImportWalletBundle.ts'
export { useImportWalletBundle } from './hooks/useImportWalletBundle.ts'
export type {
  UseInitImportWalletParameters,
  UseInitImportWalletReturnType,
} from './hooks/useInitImportWallet.ts'
export { useInitImportWallet } from './hooks/useInitImportWallet.ts'
export type { UseLatchkeyParameters } from './hooks/useLatchkey.ts'
export { useLatchkey } from './hooks/useLatchkey.ts'
export { useLatchkeyQueryClient } from './hooks/useLatchkeyQueryClient.ts'
// issue 38: linked logins
export type { UseLinkEmailParameters, UseLinkEmailReturnType } from './hooks/useLinkEmail.ts'
export { useLinkEmail } from './hooks/useLinkEmail.ts'
export type { UseLinkedLoginsParameters, UseLinkedLoginsReturnType } from './hooks/useLinkedLogins.ts'
export { useLinkedLogins } from './hooks/useLinkedLogins.ts'
// ---- linking an OAuth login (issue 38) ----
export type { UseLinkOAuthParameters, UseLinkOAuthReturnType } from './hooks/useLinkOAuth.ts'
export { useLinkOAuth } from './hooks/useLinkOAuth.ts'
export type { UseLogoutParameters, UseLogoutReturnType } from './hooks/useLogout.ts'
export { useLogout } from './hooks/useLogout.ts'
export type { UseMfaFactorsParameters, UseMfaFactorsReturnType } from './hooks/useMfaFactors.ts'
export { useMfaFactors } from './hooks/useMfaFactors.ts'
export type { UseMfaPoliciesParameters, UseMfaPoliciesReturnType } from './hooks/useMfaPolicies.ts'
export { useMfaPolicies } from './hooks/useMfaPolicies.ts'
export type { UseOAuthSignInParameters, UseOAuthSignInReturnType } from './hooks/useOAuthSignIn.ts'
export { useOAuthSignIn } from './hooks/useOAuthSignIn.ts'
export type { UseOtpSignInReturnType, VerifyOtpCodeVariables } from './hooks/useOtpSignIn.ts'
export { useOtpSignIn } from './hooks/useOtpSignIn.ts'
export type { UsePasskeySignInParameters, UsePasskeySignInReturnType } from './hooks/usePasskeySignIn.ts'
export { usePasskeySignIn } from './hooks/usePasskeySignIn.ts'
export type { UsePasskeySignUpParameters, UsePasskeySignUpReturnType } from './hooks/usePasskeySignUp.ts'
export { usePasskeySignUp } from './hooks/usePasskeySignUp.ts'
export type { UsePoliciesParameters, UsePoliciesReturnType } from './hooks/usePolicies.ts'
export { usePolicies } from './hooks/usePolicies.ts'
export type { UsePolicyParameters, UsePolicyReturnType } from './hooks/usePolicy.ts'
export { usePolicy } from './hooks/usePolicy.ts'
export type {
  UsePolicyEvaluationsParameters,
  UsePolicyEvaluationsReturnType,
} from './hooks/usePolicyEvaluations.ts'
export { usePolicyEvaluations } from './hooks/usePolicyEvaluations.ts'
export type { UseRefreshSessionParameters, UseRefreshSessionReturnType } from './hooks/useRefreshSession.ts'
export { useRefreshSession } from './hooks/useRefreshSession.ts'
export type { UseRejectActivityParameters, UseRejectActivityReturnType } from './hooks/useRejectActivity.ts'
export { useRejectActivity } from './hooks/useRejectActivity.ts'
export type { UseRemovePasskeyParameters, UseRemovePasskeyReturnType } from './hooks/useRemovePasskey.ts'
export { useRemovePasskey } from './hooks/useRemovePasskey.ts'
export type {
  UseRevokeAgentAllowanceParameters,
  UseRevokeAgentAllowanceReturnType,
} from './hooks/useRevokeAgentAllowance.ts'
export { useRevokeAgentAllowance } from './hooks/useRevokeAgentAllowance.ts'
export type { UseSendCallsParameters, UseSendCallsReturnType } from './hooks/useSendCalls.ts'
export { useSendCalls } from './hooks/useSendCalls.ts'
// ---- e-mail/SMS second factor (issue 38) ----
export type { UseSendMfaCodeParameters, UseSendMfaCodeReturnType } from './hooks/useSendMfaCode.ts'
export { useSendMfaCode } from './hooks/useSendMfaCode.ts'
export type {
  UseSendRawTransactionParameters,
  UseSendRawTransactionReturnType,
} from './hooks/useSendRawTransaction.ts'
export { useSendRawTransaction } from './hooks/useSendRawTransaction.ts'
export type {
  UseSendTransactionParameters,
  UseSendTransactionReturnType,
} from './hooks/useSendTransaction.ts'
export { useSendTransaction } from './hooks/useSendTransaction.ts'
export type { UseSessionParameters } from './hooks/useSession.ts'
export { useSession } from './hooks/useSession.ts'
export { useSessionState } from './hooks/useSessionState.ts'
export type { UseSessionStatusParameters } from './hooks/useSessionStatus.ts'
export { useSessionStatus } from './hooks/useSessionStatus.ts'
export { useSessions } from './hooks/useSessions.ts'
export type { UseSignMessageParameters, UseSignMessageReturnType } from './hooks/useSignMessage.ts'
export { useSignMessage } from './hooks/useSignMessage.ts'
export type {
  UseSignRawPayloadsParameters,
  UseSignRawPayloadsReturnType,
} from './hooks/useSignRawPayloads.ts'
export { useSignRawPayloads } from './hooks/useSignRawPayloads.ts'
export type {
  UseSignTransactionParameters,
  UseSignTransactionReturnType,
} from './hooks/useSignTransaction.ts'
export { useSignTransaction } from './hooks/useSignTransaction.ts'
export type { UseSignTypedDataParameters, UseSignTypedDataReturnType } from './hooks/useSignTypedData.ts'
export { useSignTypedData } from './hooks/useSignTypedData.ts'
export type { UseSpendingLimitsParameters, UseSpendingLimitsReturnType } from './hooks/useSpendingLimits.ts'
export { useSpendingLimits } from './hooks/useSpendingLimits.ts'
export type {
  UseSubOrganizationsParameters,
  UseSubOrganizationsReturnType,
} from './hooks/useSubOrganizations.ts'
export { useSubOrganizations } from './hooks/useSubOrganizations.ts'
export { useSwitchSession } from './hooks/useSwitchSession.ts'
export type { UseUnlinkLoginParameters, UseUnlinkLoginReturnType } from './hooks/useUnlinkLogin.ts'
export { useUnlinkLogin } from './hooks/useUnlinkLogin.ts'
export type {
  UseUpdateMfaPolicyParameters,
  UseUpdateMfaPolicyReturnType,
} from './hooks/useUpdateMfaPolicy.ts'
export { useUpdateMfaPolicy } from './hooks/useUpdateMfaPolicy.ts'
export type { UseUpdatePolicyParameters, UseUpdatePolicyReturnType } from './hooks/useUpdatePolicy.ts'
export { useUpdatePolicy } from './hooks/useUpdatePolicy.ts'
export type {
  UseUpdateSpendingLimitParameters,
  UseUpdateSpendingLimitReturnType,
} from './hooks/useUpdateSpendingLimit.ts'
export { useUpdateSpendingLimit } from './hooks/useUpdateSpendingLimit.ts'
export type { UseUpdateUserNameParameters, UseUpdateUserNameReturnType } from './hooks/useUpdateUserName.ts'
export { useUpdateUserName } from './hooks/useUpdateUserName.ts'
export type { UseUpdateUserTagParameters, UseUpdateUserTagReturnType } from './hooks/useUpdateUserTag.ts'
export { useUpdateUserTag } from './hooks/useUpdateUserTag.ts'
export type { UseUserParameters, UseUserReturnType } from './hooks/useUser.ts'
export { useUser } from './hooks/useUser.ts'
export type { UseUsersParameters, UseUsersReturnType } from './hooks/useUsers.ts'
export { useUsers } from './hooks/useUsers.ts'
export type { UseUserTagsParameters, UseUserTagsReturnType } from './hooks/useUserTags.ts'
export { useUserTags } from './hooks/useUserTags.ts'
export type { UseWalletParameters, UseWalletReturnType } from './hooks/useWallet.ts'
export { useWallet } from './hooks/useWallet.ts'
export type { UseWalletAccountsParameters, UseWalletAccountsReturnType } from './hooks/useWalletAccounts.ts'
export { useWalletAccounts } from './hooks/useWalletAccounts.ts'
export type {
  UseWalletKitConfigParameters,
  UseWalletKitConfigReturnType,
} from './hooks/useWalletKitConfig.ts'
export { useWalletKitConfig } from './hooks/useWalletKitConfig.ts'
export type { UseWalletSignInParameters, UseWalletSignInReturnType } from './hooks/useWalletSignIn.ts'
export { useWalletSignIn } from './hooks/useWalletSignIn.ts'
export type { UseWalletsParameters, UseWalletsReturnType } from './hooks/useWallets.ts'
export { useWallets } from './hooks/useWallets.ts'
export type { UseWhoamiParameters, UseWhoamiReturnType } from './hooks/useWhoami.ts'
export { useWhoami } from './hooks/useWhoami.ts'
export type { LatchkeyProviderProps } from './LatchkeyProvider.tsx'
export { LatchkeyProvider } from './LatchkeyProvider.tsx'
