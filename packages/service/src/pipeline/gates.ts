import type { ActivityStatus } from '@latchkey/protocol'
import type { ApiError } from '../kernel/base/errors.ts'
import type { ActivityGate, GateInput, Registry } from '../kernel/registry.ts'

/**
 * The plugins' gates (`ServicePlugin.gate`) on an activity the decision allowed: the first that
 * holds it names the status it waits in; none holding, it runs. The pipeline knows no gate: the
 * MFA wing registers one.
 */
export async function heldBy(registry: Registry, input: GateInput): Promise<ActivityGate | undefined> {
  for (const plugin of registry.plugins)
    if (plugin.gate && (await plugin.gate.hold(input))) return plugin.gate
  return undefined
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
