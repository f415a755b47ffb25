import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeleteTotpFactorParameters,
  DeleteTotpFactorReturnType,
} from '../../core/actions/activities/deleteTotpFactor.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deleteTotpFactorMutationOptions } from '../../core/query/deleteTotpFactor.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseDeleteTotpFactorParameters = ClientParameter &
  MutationParameter<DeleteTotpFactorReturnType, DeleteTotpFactorParameters>
export type UseDeleteTotpFactorReturnType = UseMutationResult<
  DeleteTotpFactorReturnType,
  LatchkeyError,
  DeleteTotpFactorParameters
>

/** Removes a TOTP factor (waits for the user's MFA policies: `MfaRequiredError`). */
export function useDeleteTotpFactor(
  parameters: UseDeleteTotpFactorParameters = {},
): UseDeleteTotpFactorReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeleteTotpFactorReturnType, DeleteTotpFactorParameters>(
    deleteTotpFactorMutationOptions(client),
    parameters.mutation,
  )
}
