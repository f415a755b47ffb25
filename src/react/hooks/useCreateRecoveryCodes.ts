import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateRecoveryCodesParameters,
  CreateRecoveryCodesReturnType,
} from '../../core/actions/activities/createRecoveryCodes.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createRecoveryCodesMutationOptions } from '../../core/query/createRecoveryCodes.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateRecoveryCodesParameters = ClientParameter &
  MutationParameter<CreateRecoveryCodesReturnType, CreateRecoveryCodesParameters>
export type UseCreateRecoveryCodesReturnType = UseMutationResult<
  CreateRecoveryCodesReturnType,
  LatchkeyError,
  CreateRecoveryCodesParameters
>

/** Ten single-use recovery codes, replacing earlier ones; shown once. */
export function useCreateRecoveryCodes(
  parameters: UseCreateRecoveryCodesParameters = {},
): UseCreateRecoveryCodesReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateRecoveryCodesReturnType, CreateRecoveryCodesParameters>(
    createRecoveryCodesMutationOptions(client),
    parameters.mutation,
  )
}
