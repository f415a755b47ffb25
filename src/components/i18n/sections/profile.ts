import { enProfile } from '../en/profile.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const profileStrings = /* @__PURE__ */ defineStrings(enProfile, {
  es: () => import('../es/profile.ts').then((m) => m.profile),
  ar: () => import('../ar/profile.ts').then((m) => m.profile),
})
