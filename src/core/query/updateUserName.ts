import {
  type UpdateUserNameParameters,
  type UpdateUserNameReturnType,
  updateUserName,
} from '../actions/activities/updateUserName.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `updateUserName`; `meta.invalidates` names the queries it makes stale. */
export function updateUserNameMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'updateUserName'] as const,
    mutationFn: (variables: UpdateUserNameParameters): Promise<UpdateUserNameReturnType> =>
      updateUserName(client, variables),
    meta: { invalidates: ['user', 'users', 'whoami'] } satisfies LatchkeyMutationMeta,
  }
}
