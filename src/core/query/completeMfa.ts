import { type CompleteMfaParameters, completeMfa } from '../actions/activities/completeMfa.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/**
 * Mutation options for `completeMfa`: it finishes whatever action was waiting, so everything may
 * be stale after it (`meta.invalidates: ['*']`).
 */
export function completeMfaMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'completeMfa'] as const,
    mutationFn: (variables: CompleteMfaParameters<unknown>): Promise<unknown> =>
      completeMfa(client, variables),
    meta: { invalidates: ['*'] } satisfies LatchkeyMutationMeta,
  }
}
