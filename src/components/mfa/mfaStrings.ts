import { joinStrings } from '../i18n/joinStrings.ts'
import { codeStrings } from '../i18n/sections/code.ts'
import { enrolmentStrings } from '../i18n/sections/enrolment.ts'
import { stepUpStrings } from '../i18n/sections/stepUp.ts'

// The strings the lazy MFA steps bring with their chunks (`useStrings` over the screen's `ui`).

/** The step-up's: the challenge and the e-mailed/texted code. */
export const stepUpUiStrings = /* @__PURE__ */ joinStrings(stepUpStrings, codeStrings)
export type StepUpKey = keyof typeof stepUpUiStrings.en

/** The authenticator enrolment's: the QR code, the key and the first code. */
export const enrolmentUiStrings = /* @__PURE__ */ joinStrings(enrolmentStrings, codeStrings)
