import {
  type CreateRecoveryCodesParameters,
  type CreateRecoveryCodesReturnType,
  createRecoveryCodes,
} from '../actions/activities/createRecoveryCodes.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createRecoveryCodes`; `meta.invalidates` names the queries it makes stale. */
export function createRecoveryCodesMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createRecoveryCodes'] as const,
    mutationFn: (variables: CreateRecoveryCodesParameters): Promise<CreateRecoveryCodesReturnType> =>
      createRecoveryCodes(client, variables),
    meta: { invalidates: ['mfaFactors'] } satisfies LatchkeyMutationMeta,
  }
}
