import { enCode } from '../en/code.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const codeStrings = /* @__PURE__ */ defineStrings(enCode, {
  es: () => import('../es/code.ts').then((m) => m.code),
  ar: () => import('../ar/code.ts').then((m) => m.code),
})
