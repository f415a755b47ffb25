import {
  type CreateApiKeysParameters,
  type CreateApiKeysReturnType,
  createApiKeys,
} from '../actions/activities/createApiKeys.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createApiKeys`; `meta.invalidates` names the queries it makes stale. */
export function createApiKeysMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createApiKeys'] as const,
    mutationFn: (variables: CreateApiKeysParameters): Promise<CreateApiKeysReturnType> =>
      createApiKeys(client, variables),
    meta: { invalidates: ['apiKeys', 'user', 'users'] } satisfies LatchkeyMutationMeta,
  }
}
