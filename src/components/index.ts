export { ActivityApproval, type ActivityApprovalProps } from './approval/ActivityApproval.tsx'
export {
  type AuthFlow,
  type AuthFlowCaptcha,
  AuthFlowContext,
  type AuthStep,
  useAuthFlowContext,
} from './auth/AuthFlowContext.ts'
export { AuthForm, type AuthFormProps } from './auth/AuthForm.tsx'
export {
  AuthModal,
  AuthModalCancelledError,
  type AuthModalProps,
  type UseAuthModalReturnType,
  useAuthModal,
} from './auth/AuthModal.tsx'
export { type AuthResult, DEFAULT_METHOD_ORDER } from './auth/useAuthFlow.ts'
export {
  ar,
  BUILT_IN_LOCALES,
  en,
  es,
  type MessageKey,
  type Messages,
  preloadMessages,
} from './i18n/index.ts'
export { AgentAllowance, type AgentAllowanceProps } from './limits/AgentAllowance.tsx'
// issue 37: whole-account spending limits
export { SpendingLimits, type SpendingLimitsProps } from './limits/SpendingLimits.tsx'
// issue 38: linked logins
export { LinkedLogins, type LinkedLoginsProps } from './logins/LinkedLogins.tsx'
// issue 38: <SecuritySettings/>
export { SecuritySettings, type SecuritySettingsProps } from './mfa/SecuritySettings.tsx'
export { UserProfile, type UserProfileProps } from './profile/UserProfile.tsx'
export { ExportWallet, type ExportWalletProps } from './secret/ExportWallet.tsx'
export { ImportWallet, type ImportWalletProps } from './secret/ImportWallet.tsx'
export type { SecretFrameMode } from './secret/SecretFrame.tsx'
export {
  SendTransaction,
  type SendTransactionCall,
  type SendTransactionProps,
} from './send/SendTransaction.tsx'
export { SessionStatus, type SessionStatusProps } from './session/SessionStatus.tsx'
export {
  SignMessageDialog,
  type SignMessageDialogProps,
  type SignMessageResult,
} from './sign/SignMessageDialog.tsx'
export { LatchkeyUIProvider, type LatchkeyUIProviderProps } from './ui/LatchkeyUIProvider.tsx'
export type { UiOptions } from './ui/uiOptions.ts'
export { WalletList, type WalletListProps } from './wallets/WalletList.tsx'
