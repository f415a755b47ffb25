import {
  type UpdateUserTagParameters,
  type UpdateUserTagReturnType,
  updateUserTag,
} from '../actions/activities/updateUserTag.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `updateUserTag`; `meta.invalidates` names the queries it makes stale. */
export function updateUserTagMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'updateUserTag'] as const,
    mutationFn: (variables: UpdateUserTagParameters): Promise<UpdateUserTagReturnType> =>
      updateUserTag(client, variables),
    meta: { invalidates: ['userTags', 'users', 'user'] } satisfies LatchkeyMutationMeta,
  }
}
