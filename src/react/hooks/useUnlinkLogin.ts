import type { UseMutationResult } from '@tanstack/react-query'
import type {
  UnlinkLoginParameters,
  UnlinkLoginReturnType,
} from '../../core/actions/activities/unlinkLogin.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { unlinkLoginMutationOptions } from '../../core/query/unlinkLogin.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUnlinkLoginParameters = ClientParameter &
  MutationParameter<UnlinkLoginReturnType, UnlinkLoginParameters>
export type UseUnlinkLoginReturnType = UseMutationResult<
  UnlinkLoginReturnType,
  LatchkeyError,
  UnlinkLoginParameters
>

/**
 * Removes one login (`unlinkLogin`) and refreshes the user and linked-logins queries. The last way
 * in is refused (`FIELD_INVALID`); an MFA policy makes it fail with `MfaRequiredError`.
 */
export function useUnlinkLogin(parameters: UseUnlinkLoginParameters = {}): UseUnlinkLoginReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<UnlinkLoginReturnType, UnlinkLoginParameters>(
    unlinkLoginMutationOptions(client),
    parameters.mutation,
  )
}
