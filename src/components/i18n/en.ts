import { enApproval } from './en/approval.ts'
import { enAuth } from './en/auth.ts'
import { enCode } from './en/code.ts'
import { enCommon } from './en/common.ts'
import { enEnrolment } from './en/enrolment.ts'
import { enHidden } from './en/hidden.ts'
import { enLimits } from './en/limits.ts'
import { enLogins } from './en/logins.ts'
import { enProfile } from './en/profile.ts'
import { enSecret } from './en/secret.ts'
import { enSecurity } from './en/security.ts'
import { enSend } from './en/send.ts'
import { enSession } from './en/session.ts'
import { enSign } from './en/sign.ts'
import { enSpending } from './en/spending.ts'
import { enStepUp } from './en/stepUp.ts'
import { enTrigger } from './en/trigger.ts'
import { enWallets } from './en/wallets.ts'

/**
 * English, the source dictionary, whole: every user-visible string and aria-label of the
 * components; `{name}` marks an interpolated value. The components never import it: each takes
 * its sections (`en/<section>.ts`), so its strings load with it. Other locales implement `Messages`.
 */
export const en = {
  ...enTrigger,
  ...enCommon,
  ...enAuth,
  ...enWallets,
  ...enSign,
  ...enSend,
  ...enSpending,
  ...enSecret,
  ...enProfile,
  ...enSession,
  ...enApproval,
  ...enHidden,
  ...enCode,
  ...enStepUp,
  ...enSecurity,
  ...enEnrolment,
  ...enLimits,
  ...enLogins,
}

export type MessageKey = keyof typeof en
/** A complete dictionary. Apps pass `Partial<Messages>` to override strings. */
export type Messages = { readonly [K in MessageKey]: string }
