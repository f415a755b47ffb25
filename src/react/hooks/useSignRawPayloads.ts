import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SignRawPayloadsParameters,
  SignRawPayloadsReturnType,
} from '../../core/actions/activities/signRawPayloads.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { signRawPayloadsMutationOptions } from '../../core/query/signRawPayloads.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSignRawPayloadsParameters = ClientParameter &
  MutationParameter<SignRawPayloadsReturnType, SignRawPayloadsParameters>
export type UseSignRawPayloadsReturnType = UseMutationResult<
  SignRawPayloadsReturnType,
  LatchkeyError,
  SignRawPayloadsParameters
>

/** Signs raw payloads (`sign_raw_payloads`). */
export function useSignRawPayloads(
  parameters: UseSignRawPayloadsParameters = {},
): UseSignRawPayloadsReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SignRawPayloadsReturnType, SignRawPayloadsParameters>(
    signRawPayloadsMutationOptions(client),
    parameters.mutation,
  )
}
