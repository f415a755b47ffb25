import { enLogins } from '../en/logins.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const loginsStrings = /* @__PURE__ */ defineStrings(enLogins, {
  es: () => import('../es/logins.ts').then((m) => m.logins),
  ar: () => import('../ar/logins.ts').then((m) => m.logins),
})
