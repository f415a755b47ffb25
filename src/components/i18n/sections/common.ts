import { enCommon } from '../en/common.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const commonStrings = /* @__PURE__ */ defineStrings(enCommon, {
  es: () => import('../es/common.ts').then((m) => m.common),
  ar: () => import('../ar/common.ts').then((m) => m.common),
})
