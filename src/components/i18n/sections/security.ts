import { enSecurity } from '../en/security.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const securityStrings = /* @__PURE__ */ defineStrings(enSecurity, {
  es: () => import('../es/security.ts').then((m) => m.security),
  ar: () => import('../ar/security.ts').then((m) => m.security),
})
