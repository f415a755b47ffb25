import {
  type DeleteApiKeysParameters,
  type DeleteApiKeysReturnType,
  deleteApiKeys,
} from '../actions/activities/deleteApiKeys.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deleteApiKeys`; `meta.invalidates` names the queries it makes stale. */
export function deleteApiKeysMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deleteApiKeys'] as const,
    mutationFn: (variables: DeleteApiKeysParameters): Promise<DeleteApiKeysReturnType> =>
      deleteApiKeys(client, variables),
    meta: { invalidates: ['apiKeys', 'user', 'users'] } satisfies LatchkeyMutationMeta,
  }
}
