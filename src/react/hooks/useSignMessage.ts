import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SignMessageParameters,
  SignMessageReturnType,
} from '../../core/actions/activities/signMessage.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { signMessageMutationOptions } from '../../core/query/signMessage.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSignMessageParameters = ClientParameter &
  MutationParameter<SignMessageReturnType, SignMessageParameters>
export type UseSignMessageReturnType = UseMutationResult<
  SignMessageReturnType,
  LatchkeyError,
  SignMessageParameters
>

/** Signs a message (EIP-191 for Ethereum, raw for ed25519 chains). */
export function useSignMessage(parameters: UseSignMessageParameters = {}): UseSignMessageReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SignMessageReturnType, SignMessageParameters>(
    signMessageMutationOptions(client),
    parameters.mutation,
  )
}
