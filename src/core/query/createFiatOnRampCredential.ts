import {
  type CreateFiatOnRampCredentialParameters,
  type CreateFiatOnRampCredentialReturnType,
  createFiatOnRampCredential,
} from '../actions/activities/createFiatOnRampCredential.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createFiatOnRampCredential`; `meta.invalidates` names the queries it makes stale. */
export function createFiatOnRampCredentialMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createFiatOnRampCredential'] as const,
    mutationFn: (
      variables: CreateFiatOnRampCredentialParameters,
    ): Promise<CreateFiatOnRampCredentialReturnType> => createFiatOnRampCredential(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
