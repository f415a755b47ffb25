import { enTrigger } from '../en/trigger.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const triggerStrings = /* @__PURE__ */ defineStrings(enTrigger, {
  es: () => import('../es/trigger.ts').then((m) => m.trigger),
  ar: () => import('../ar/trigger.ts').then((m) => m.trigger),
})
