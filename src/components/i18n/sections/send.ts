import { enSend } from '../en/send.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const sendStrings = /* @__PURE__ */ defineStrings(enSend, {
  es: () => import('../es/send.ts').then((m) => m.send),
  ar: () => import('../ar/send.ts').then((m) => m.send),
})
