import type { Messages } from './en.ts'
import { approval } from './es/approval.ts'
import { auth } from './es/auth.ts'
import { code } from './es/code.ts'
import { common } from './es/common.ts'
import { enrolment } from './es/enrolment.ts'
import { hidden } from './es/hidden.ts'
import { limits } from './es/limits.ts'
import { logins } from './es/logins.ts'
import { profile } from './es/profile.ts'
import { secret } from './es/secret.ts'
import { security } from './es/security.ts'
import { send } from './es/send.ts'
import { session } from './es/session.ts'
import { sign } from './es/sign.ts'
import { spending } from './es/spending.ts'
import { stepUp } from './es/stepUp.ts'
import { trigger } from './es/trigger.ts'
import { wallets } from './es/wallets.ts'

/** Spanish, whole (the components load it section by section). */
export const es: Messages = {
  ...trigger,
  ...common,
  ...auth,
  ...wallets,
  ...sign,
  ...send,
  ...spending,
  ...secret,
  ...profile,
  ...session,
  ...approval,
  ...hidden,
  ...code,
  ...stepUp,
  ...security,
  ...enrolment,
  ...limits,
  ...logins,
}
