import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateSubOrganizationParameters,
  CreateSubOrganizationReturnType,
} from '../../core/actions/activities/createSubOrganization.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createSubOrganizationMutationOptions } from '../../core/query/createSubOrganization.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateSubOrganizationParameters = ClientParameter &
  MutationParameter<CreateSubOrganizationReturnType, CreateSubOrganizationParameters>
export type UseCreateSubOrganizationReturnType = UseMutationResult<
  CreateSubOrganizationReturnType,
  LatchkeyError,
  CreateSubOrganizationParameters
>

/** Creates a sub-organization. */
export function useCreateSubOrganization(
  parameters: UseCreateSubOrganizationParameters = {},
): UseCreateSubOrganizationReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateSubOrganizationReturnType, CreateSubOrganizationParameters>(
    createSubOrganizationMutationOptions(client),
    parameters.mutation,
  )
}
