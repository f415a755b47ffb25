import type { PolicyEffect, PolicyParams } from '@latchkey/protocol'
import { ConflictError, FieldError } from '../kernel/base/errors.ts'
import { Reader } from '../kernel/Reader.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { parseCondition, parseConsensus } from './evaluatePolicies.ts'
import { POLICY_LIMITS } from './limits.ts'
import { PolicySyntaxError } from './PolicySyntaxError.ts'

export const POLICY_EFFECTS: readonly PolicyEffect[] = ['EFFECT_ALLOW', 'EFFECT_DENY']

/**
 * Reads an optional policy expression and parses it: a syntax error is a 400 FIELD_INVALID
 * naming the field, with the 0-based `position` in the message and in `details.position`.
 * '' (or absent) means no expression.
 */
export function readExpression(r: Reader, name: string, kind: 'condition' | 'consensus'): string | undefined {
  const source = r.optString(name, { min: 0, max: POLICY_LIMITS.maxExpressionLength })
  if (source === undefined || source.trim() === '') return source
  try {
    if (kind === 'condition') parseCondition(source)
    else parseConsensus(source)
  } catch (error) {
    if (!(error instanceof PolicySyntaxError)) throw error
    throw new FieldError({
      field: r.field(name),
      message: `${r.field(name)}: ${error.message}`,
      extra: {
        position: error.position,
      },
    })
  }
  return source
}

export function readPolicyParams(value: unknown, field: string): PolicyParams {
  const r = new Reader(value, field)
  const condition = readExpression(r, 'condition', 'condition')
  const consensus = readExpression(r, 'consensus', 'consensus')
  return {
    policyName: r.string('policyName', { max: 256 }),
    effect: r.enum('effect', POLICY_EFFECTS),
    ...(condition !== undefined ? { condition } : {}),
    ...(consensus !== undefined ? { consensus } : {}),
    notes: r.optString('notes', { min: 0, max: 4096 }) ?? '',
  }
}

/** Most policies one organization holds (each is evaluated on every activity). */
export const MAX_POLICIES = 1000

/**
 * Refuses a name already used by another policy of the organization (but `exceptId`, the policy
 * being renamed), and a full organization when a policy is added; `field` names the name.
 */
export async function checkPolicyName(
  reads: Reads,
  {
    organizationId,
    name,
    field,
    exceptId,
  }: { organizationId: string; name: string; field: string; exceptId?: string },
): Promise<void> {
  const policies = await reads.findBy('policies', 'organizationId', organizationId)
  if (policies.some((policy) => policy.name === name && policy.id !== exceptId))
    throw new ConflictError({ field, message: `a policy named ${name} exists` })
  if (exceptId === undefined && policies.length >= MAX_POLICIES)
    throw new FieldError({ field, message: `an organization holds at most ${MAX_POLICIES} policies` })
}
