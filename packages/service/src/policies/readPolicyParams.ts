import type { PolicyEffect, PolicyParams } from '@latchkey/protocol'
import { ConflictError, FieldError, LimitError } from '../kernel/base/errors.ts'
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

/** Characters of a policy's expressions, as `maxExpressionCharactersPerOrganization` counts them. */
export const expressionCharacters = (policy: {
  condition?: string | undefined
  consensus?: string | undefined
}) => (policy.condition ?? '').length + (policy.consensus ?? '').length

/**
 * Refuses a name already used by another policy of the organization (but `exceptId`, the policy
 * being changed), a full organization when a policy is added, and expressions that would take the
 * organization's past `maxExpressionCharactersPerOrganization` (412 RESOURCE_LIMIT_REACHED naming
 * `characters.field`; a change that does not grow the policy's expressions passes, so an
 * organization over the cap from before it existed can still shorten or rename its policies).
 * `name` absent: not renamed; `characters` absent: expressions unchanged. One read of the
 * organization's policies in the activity's transaction (SERIALIZABLE on PostgreSQL, so two
 * creates at a cap never both pass).
 */
export async function checkPolicyRoom(
  reads: Reads,
  {
    organizationId,
    exceptId,
    name,
    characters,
  }: {
    organizationId: string
    exceptId?: string
    name?: { value: string; field: string }
    characters?: { count: number; field: string }
  },
): Promise<void> {
  const policies = await reads.findBy('policies', 'organizationId', organizationId)
  if (name && policies.some((policy) => policy.name === name.value && policy.id !== exceptId))
    throw new ConflictError({ field: name.field, message: `a policy named ${name.value} exists` })
  if (exceptId === undefined && policies.length >= MAX_POLICIES)
    throw new FieldError({
      field: name?.field ?? 'parameters',
      message: `an organization holds at most ${MAX_POLICIES} policies`,
    })
  if (!characters) return
  const max = POLICY_LIMITS.maxExpressionCharactersPerOrganization
  let held = 0
  let before = 0
  for (const policy of policies) {
    if (policy.id === exceptId) before = expressionCharacters(policy)
    else held += expressionCharacters(policy)
  }
  if (characters.count <= before || held + characters.count <= max) return
  throw new LimitError({
    code: 'RESOURCE_LIMIT_REACHED',
    field: characters.field,
    message: `organization ${organizationId}'s other policies hold ${held} characters of expressions, this one ${characters.count}; at most ${max} together (maxExpressionCharactersPerOrganization)`,
    extra: { limit: 'maxExpressionCharactersPerOrganization', max },
  })
}
