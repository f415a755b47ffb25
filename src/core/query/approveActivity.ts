import {
  type ApproveActivityParameters,
  type ApproveActivityReturnType,
  approveActivity,
} from '../actions/activities/approveActivity.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `approveActivity`; `meta.invalidates` names the queries it makes stale. */
export function approveActivityMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'approveActivity'] as const,
    mutationFn: (variables: ApproveActivityParameters): Promise<ApproveActivityReturnType> =>
      approveActivity(client, variables),
    meta: { invalidates: ['*'] } satisfies LatchkeyMutationMeta,
  }
}
