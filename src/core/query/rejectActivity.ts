import {
  type RejectActivityParameters,
  type RejectActivityReturnType,
  rejectActivity,
} from '../actions/activities/rejectActivity.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `rejectActivity`; `meta.invalidates` names the queries it makes stale. */
export function rejectActivityMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'rejectActivity'] as const,
    mutationFn: (variables: RejectActivityParameters): Promise<RejectActivityReturnType> =>
      rejectActivity(client, variables),
    meta: { invalidates: ['activity', 'policyEvaluations'] } satisfies LatchkeyMutationMeta,
  }
}
