import type { ActivityPath, ActivityStatus } from '@latchkey/protocol'
import type { ApiError } from '../kernel/base/errors.ts'
import { Reader } from '../kernel/Reader.ts'
import type { ActivityGate, GateInput, Registry } from '../kernel/registry.ts'
import type { ActivityRow } from '../kernel/store/model.ts'

/**
 * The plugins' gates (`ServicePlugin.gate`) on an activity the decision allowed: the first that
 * holds it names the status it waits in; none holding, it runs. The pipeline knows no gate: the
 * MFA wing registers one.
 */
export async function heldBy(registry: Registry, input: GateInput): Promise<ActivityGate | undefined> {
  const judged: GateInput = { ...input, loosensGuard: (row) => loosensGuard(registry, input.tx, row) }
  for (const plugin of registry.plugins)
    if (plugin.gate && (await plugin.gate.hold(judged))) return plugin.gate
  return undefined
}

/**
 * Whether `row` loosens a guard on spending (`ActivityHandler.loosensGuard`), with its parameters
 * as recorded, parsed as they were when it was submitted. The row may be another than the one
 * judged: a vote is judged by the activity it approves.
 */
async function loosensGuard(registry: Registry, tx: GateInput['tx'], row: ActivityRow): Promise<boolean> {
  const handler = registry.activities.get(row.path as ActivityPath)
  if (!handler?.loosensGuard) return false
  return (
    (await handler.loosensGuard(
      tx,
      row.organizationId,
      handler.parse(new Reader(row.intent, 'parameters'), row.type),
    )) === true
  )
}

/** The gate whose waiting status `status` is, if any. */
export const gateOf = (registry: Registry, status: ActivityStatus): ActivityGate | undefined =>
  registry.plugins.find((plugin) => plugin.gate?.status === status)?.gate

/**
 * The first refusal of a plugin that confines the caller (`ServicePlugin.confine`: a session
 * profile's scope), asked before the decision; undefined when none refuses.
 */
export async function confinedBy(registry: Registry, input: GateInput): Promise<ApiError | undefined> {
  for (const plugin of registry.plugins) {
    const refusal = plugin.confine ? await plugin.confine(input) : undefined
    if (refusal) return refusal
  }
  return undefined
}
