import { enStepUp } from '../en/stepUp.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const stepUpStrings = /* @__PURE__ */ defineStrings(enStepUp, {
  es: () => import('../es/stepUp.ts').then((m) => m.stepUp),
  ar: () => import('../ar/stepUp.ts').then((m) => m.stepUp),
})
