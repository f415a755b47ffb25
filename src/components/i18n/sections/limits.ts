import { enLimits } from '../en/limits.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const limitsStrings = /* @__PURE__ */ defineStrings(enLimits, {
  es: () => import('../es/limits.ts').then((m) => m.limits),
  ar: () => import('../ar/limits.ts').then((m) => m.limits),
})
