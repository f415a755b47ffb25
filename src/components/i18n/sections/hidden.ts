import { enHidden } from '../en/hidden.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const hiddenStrings = /* @__PURE__ */ defineStrings(enHidden, {
  es: () => import('../es/hidden.ts').then((m) => m.hidden),
  ar: () => import('../ar/hidden.ts').then((m) => m.hidden),
})
