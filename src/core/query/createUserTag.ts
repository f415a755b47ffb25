import {
  type CreateUserTagParameters,
  type CreateUserTagReturnType,
  createUserTag,
} from '../actions/activities/createUserTag.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createUserTag`; `meta.invalidates` names the queries it makes stale. */
export function createUserTagMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createUserTag'] as const,
    mutationFn: (variables: CreateUserTagParameters): Promise<CreateUserTagReturnType> =>
      createUserTag(client, variables),
    meta: { invalidates: ['userTags', 'users', 'user'] } satisfies LatchkeyMutationMeta,
  }
}
