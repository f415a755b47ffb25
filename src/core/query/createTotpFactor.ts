import {
  type CreateTotpFactorParameters,
  type CreateTotpFactorReturnType,
  createTotpFactor,
} from '../actions/activities/createTotpFactor.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createTotpFactor`; `meta.invalidates` names the queries it makes stale. */
export function createTotpFactorMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createTotpFactor'] as const,
    mutationFn: (variables: CreateTotpFactorParameters): Promise<CreateTotpFactorReturnType> =>
      createTotpFactor(client, variables),
    meta: { invalidates: ['mfaFactors'] } satisfies LatchkeyMutationMeta,
  }
}
