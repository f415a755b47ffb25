import { approval } from './ar/approval.ts'
import { auth } from './ar/auth.ts'
import { code } from './ar/code.ts'
import { common } from './ar/common.ts'
import { enrolment } from './ar/enrolment.ts'
import { hidden } from './ar/hidden.ts'
import { limits } from './ar/limits.ts'
import { logins } from './ar/logins.ts'
import { profile } from './ar/profile.ts'
import { secret } from './ar/secret.ts'
import { security } from './ar/security.ts'
import { send } from './ar/send.ts'
import { session } from './ar/session.ts'
import { sign } from './ar/sign.ts'
import { spending } from './ar/spending.ts'
import { stepUp } from './ar/stepUp.ts'
import { trigger } from './ar/trigger.ts'
import { wallets } from './ar/wallets.ts'
import type { Messages } from './en.ts'

/** Arabic (right to left), whole (the components load it section by section). */
export const ar: Messages = {
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
