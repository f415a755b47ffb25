import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SignUpWithPasskeyParameters,
  SignUpWithPasskeyReturnType,
} from '../../core/actions/auth/signUpWithPasskey.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { signUpWithPasskeyMutationOptions } from '../../core/query/signUpWithPasskey.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UsePasskeySignUpParameters = ClientParameter &
  MutationParameter<SignUpWithPasskeyReturnType, SignUpWithPasskeyParameters>
export type UsePasskeySignUpReturnType = UseMutationResult<
  SignUpWithPasskeyReturnType,
  LatchkeyError,
  SignUpWithPasskeyParameters
>

/** Passkey sign-up: `mutate({ userName })`. */
export function usePasskeySignUp(parameters: UsePasskeySignUpParameters = {}): UsePasskeySignUpReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SignUpWithPasskeyReturnType, SignUpWithPasskeyParameters>(
    signUpWithPasskeyMutationOptions(client),
    parameters.mutation,
  )
}
