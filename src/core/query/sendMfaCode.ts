import { type SendMfaCodeParameters, sendMfaCode } from '../actions/activities/sendMfaCode.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `sendMfaCode` (it changes nothing a query shows). */
export function sendMfaCodeMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'sendMfaCode'] as const,
    mutationFn: (variables: SendMfaCodeParameters) => sendMfaCode(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}
