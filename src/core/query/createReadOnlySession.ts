import {
  type CreateReadOnlySessionParameters,
  type CreateReadOnlySessionReturnType,
  createReadOnlySession,
} from '../actions/activities/createReadOnlySession.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createReadOnlySession`; `meta.invalidates` names the queries it makes stale. */
export function createReadOnlySessionMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createReadOnlySession'] as const,
    mutationFn: (variables: CreateReadOnlySessionParameters = {}): Promise<CreateReadOnlySessionReturnType> =>
      createReadOnlySession(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
