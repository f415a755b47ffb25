import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateTotpFactorParameters,
  CreateTotpFactorReturnType,
} from '../../core/actions/activities/createTotpFactor.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createTotpFactorMutationOptions } from '../../core/query/createTotpFactor.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateTotpFactorParameters = ClientParameter &
  MutationParameter<CreateTotpFactorReturnType, CreateTotpFactorParameters>
export type UseCreateTotpFactorReturnType = UseMutationResult<
  CreateTotpFactorReturnType,
  LatchkeyError,
  CreateTotpFactorParameters
>

/** Enrols a TOTP factor: its secret and `otpauth://` URI, shown once (confirm it with `useConfirmTotpFactor`). */
export function useCreateTotpFactor(
  parameters: UseCreateTotpFactorParameters = {},
): UseCreateTotpFactorReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateTotpFactorReturnType, CreateTotpFactorParameters>(
    createTotpFactorMutationOptions(client),
    parameters.mutation,
  )
}
