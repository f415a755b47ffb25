import { enAuth } from '../en/auth.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const authStrings = /* @__PURE__ */ defineStrings(enAuth, {
  es: () => import('../es/auth.ts').then((m) => m.auth),
  ar: () => import('../ar/auth.ts').then((m) => m.auth),
})
