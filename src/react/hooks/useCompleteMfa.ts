import type { UseMutationResult } from '@tanstack/react-query'
import type { CompleteMfaParameters } from '../../core/actions/activities/completeMfa.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { completeMfaMutationOptions } from '../../core/query/completeMfa.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCompleteMfaParameters = ClientParameter &
  MutationParameter<unknown, CompleteMfaParameters<unknown>>
export type UseCompleteMfaReturnType = UseMutationResult<
  unknown,
  LatchkeyError,
  CompleteMfaParameters<unknown>
>

/**
 * Satisfies the step an action waits for (`MfaRequiredError` as `challenge`, with a TOTP code, a
 * recovery code or `passkey: true`); `data` is the original action's result. Another step
 * remaining rejects with a new `MfaRequiredError`.
 */
export function useCompleteMfa(parameters: UseCompleteMfaParameters = {}): UseCompleteMfaReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<unknown, CompleteMfaParameters<unknown>>(
    completeMfaMutationOptions(client),
    parameters.mutation,
  )
}
