import { enSign } from '../en/sign.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const signStrings = /* @__PURE__ */ defineStrings(enSign, {
  es: () => import('../es/sign.ts').then((m) => m.sign),
  ar: () => import('../ar/sign.ts').then((m) => m.sign),
})
