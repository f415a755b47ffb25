import { enSecret } from '../en/secret.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const secretStrings = /* @__PURE__ */ defineStrings(enSecret, {
  es: () => import('../es/secret.ts').then((m) => m.secret),
  ar: () => import('../ar/secret.ts').then((m) => m.secret),
})
