import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SignInWithPasskeyParameters,
  SignInWithPasskeyReturnType,
} from '../../core/actions/auth/signInWithPasskey.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { signInWithPasskeyMutationOptions } from '../../core/query/signInWithPasskey.ts'
import {
  type ClientParameter,
  type MutationParameter,
  type OptionalVariables,
  useLatchkeyMutation,
} from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UsePasskeySignInParameters = ClientParameter &
  MutationParameter<SignInWithPasskeyReturnType, OptionalVariables<SignInWithPasskeyParameters>>
export type UsePasskeySignInReturnType = UseMutationResult<
  SignInWithPasskeyReturnType,
  LatchkeyError,
  OptionalVariables<SignInWithPasskeyParameters>
>

/** Passkey login. */
export function usePasskeySignIn(parameters: UsePasskeySignInParameters = {}): UsePasskeySignInReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SignInWithPasskeyReturnType, OptionalVariables<SignInWithPasskeyParameters>>(
    signInWithPasskeyMutationOptions(client) as never,
    parameters.mutation,
  )
}
