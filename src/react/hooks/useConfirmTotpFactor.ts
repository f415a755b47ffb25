import type { UseMutationResult } from '@tanstack/react-query'
import type {
  ConfirmTotpFactorParameters,
  ConfirmTotpFactorReturnType,
} from '../../core/actions/activities/confirmTotpFactor.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { confirmTotpFactorMutationOptions } from '../../core/query/confirmTotpFactor.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseConfirmTotpFactorParameters = ClientParameter &
  MutationParameter<ConfirmTotpFactorReturnType, ConfirmTotpFactorParameters>
export type UseConfirmTotpFactorReturnType = UseMutationResult<
  ConfirmTotpFactorReturnType,
  LatchkeyError,
  ConfirmTotpFactorParameters
>

/** Confirms a TOTP factor with a first code from the authenticator app. */
export function useConfirmTotpFactor(
  parameters: UseConfirmTotpFactorParameters = {},
): UseConfirmTotpFactorReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<ConfirmTotpFactorReturnType, ConfirmTotpFactorParameters>(
    confirmTotpFactorMutationOptions(client),
    parameters.mutation,
  )
}
