import { enEnrolment } from '../en/enrolment.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const enrolmentStrings = /* @__PURE__ */ defineStrings(enEnrolment, {
  es: () => import('../es/enrolment.ts').then((m) => m.enrolment),
  ar: () => import('../ar/enrolment.ts').then((m) => m.enrolment),
})
