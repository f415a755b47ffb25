import { enApproval } from '../en/approval.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const approvalStrings = /* @__PURE__ */ defineStrings(enApproval, {
  es: () => import('../es/approval.ts').then((m) => m.approval),
  ar: () => import('../ar/approval.ts').then((m) => m.approval),
})
