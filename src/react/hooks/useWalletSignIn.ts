import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SignInWithWalletParameters,
  SignInWithWalletReturnType,
} from '../../core/actions/auth/signInWithWallet.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { signInWithWalletMutationOptions } from '../../core/query/signInWithWallet.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseWalletSignInParameters = ClientParameter &
  MutationParameter<SignInWithWalletReturnType, SignInWithWalletParameters>
export type UseWalletSignInReturnType = UseMutationResult<
  SignInWithWalletReturnType,
  LatchkeyError,
  SignInWithWalletParameters
>

/** External-wallet sign-in or sign-up (one wallet prompt). */
export function useWalletSignIn(parameters: UseWalletSignInParameters = {}): UseWalletSignInReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SignInWithWalletReturnType, SignInWithWalletParameters>(
    signInWithWalletMutationOptions(client),
    parameters.mutation,
  )
}
