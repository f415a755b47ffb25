import {
  type DeleteTotpFactorParameters,
  type DeleteTotpFactorReturnType,
  deleteTotpFactor,
} from '../actions/activities/deleteTotpFactor.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `deleteTotpFactor`; `meta.invalidates` names the queries it makes stale. */
export function deleteTotpFactorMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'deleteTotpFactor'] as const,
    mutationFn: (variables: DeleteTotpFactorParameters): Promise<DeleteTotpFactorReturnType> =>
      deleteTotpFactor(client, variables),
    meta: { invalidates: ['mfaFactors'] } satisfies LatchkeyMutationMeta,
  }
}
