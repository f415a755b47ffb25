import {
  type ConfirmTotpFactorParameters,
  type ConfirmTotpFactorReturnType,
  confirmTotpFactor,
} from '../actions/activities/confirmTotpFactor.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `confirmTotpFactor`; `meta.invalidates` names the queries it makes stale. */
export function confirmTotpFactorMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'confirmTotpFactor'] as const,
    mutationFn: (variables: ConfirmTotpFactorParameters): Promise<ConfirmTotpFactorReturnType> =>
      confirmTotpFactor(client, variables),
    meta: { invalidates: ['mfaFactors'] } satisfies LatchkeyMutationMeta,
  }
}
