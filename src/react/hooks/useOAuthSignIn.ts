import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SignInWithOAuthParameters,
  SignInWithOAuthReturnType,
} from '../../core/actions/auth/signInWithOAuth.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { signInWithOAuthMutationOptions } from '../../core/query/signInWithOAuth.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseOAuthSignInParameters = ClientParameter &
  MutationParameter<SignInWithOAuthReturnType, SignInWithOAuthParameters>
export type UseOAuthSignInReturnType = UseMutationResult<
  SignInWithOAuthReturnType,
  LatchkeyError,
  SignInWithOAuthParameters
>

/** OAuth sign-in (popup, redirect fallback): `mutate({ provider: 'google' })`. */
export function useOAuthSignIn(parameters: UseOAuthSignInParameters = {}): UseOAuthSignInReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SignInWithOAuthReturnType, SignInWithOAuthParameters>(
    signInWithOAuthMutationOptions(client),
    parameters.mutation,
  )
}
