import { enSpending } from '../en/spending.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const spendingStrings = /* @__PURE__ */ defineStrings(enSpending, {
  es: () => import('../es/spending.ts').then((m) => m.spending),
  ar: () => import('../ar/spending.ts').then((m) => m.spending),
})
