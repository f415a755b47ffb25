import type { UseMutationResult } from '@tanstack/react-query'
import type { SendCallsParameters, SendCallsReturnType } from '../../core/actions/activities/sendCalls.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { sendCallsMutationOptions } from '../../core/query/sendCalls.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSendCallsParameters = ClientParameter &
  MutationParameter<SendCallsReturnType, SendCallsParameters>
export type UseSendCallsReturnType = UseMutationResult<
  SendCallsReturnType,
  LatchkeyError,
  SendCallsParameters
>

/** Sends a batch of Ethereum calls, atomically, sponsored with `sponsor: true` (`sendCalls`); follow the result with `useCallsStatus`. */
export function useSendCalls(parameters: UseSendCallsParameters = {}): UseSendCallsReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SendCallsReturnType, SendCallsParameters>(
    sendCallsMutationOptions(client),
    parameters.mutation,
  )
}
