import {
  type DeleteUsersParameters,
  type DeleteUsersReturnType,
  deleteUsers,
} from '../actions/activities/deleteUsers.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deleteUsers`; `meta.invalidates` names the queries it makes stale. */
export function deleteUsersMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deleteUsers'] as const,
    mutationFn: (variables: DeleteUsersParameters): Promise<DeleteUsersReturnType> =>
      deleteUsers(client, variables),
    meta: { invalidates: ['users', 'user', 'userTags'] } satisfies LatchkeyMutationMeta,
  }
}
