import type { ActivityStatus } from '@latchkey/protocol'
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
