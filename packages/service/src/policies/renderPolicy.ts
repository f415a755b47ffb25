import type { Policy } from '@latchkey/protocol'
import { timestampOf } from '../kernel/base/ids.ts'
import type { PolicyRow } from '../kernel/store/model.ts'

export const renderPolicy = (row: PolicyRow): Policy => ({
  policyId: row.id,
  policyName: row.name,
  effect: row.effect,
  condition: row.condition,
  consensus: row.consensus,
  notes: row.notes,
  createdAt: timestampOf(row.createdAt),
  updatedAt: timestampOf(row.updatedAt),
})
