import {
  type CreateUsersParameters,
  type CreateUsersReturnType,
  createUsers,
} from '../actions/activities/createUsers.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createUsers`; `meta.invalidates` names the queries it makes stale. */
export function createUsersMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createUsers'] as const,
    mutationFn: (variables: CreateUsersParameters): Promise<CreateUsersReturnType> =>
      createUsers(client, variables),
    meta: { invalidates: ['users', 'user', 'userTags'] } satisfies LatchkeyMutationMeta,
  }
}
