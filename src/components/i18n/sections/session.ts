import { enSession } from '../en/session.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const sessionStrings = /* @__PURE__ */ defineStrings(enSession, {
  es: () => import('../es/session.ts').then((m) => m.session),
  ar: () => import('../ar/session.ts').then((m) => m.session),
})
