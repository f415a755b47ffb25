import type { UseMutationResult } from '@tanstack/react-query'
import { useCallback, useState } from 'react'
import { useStore } from 'zustand'
import type { CompleteOtpSignInReturnType } from '../../core/actions/auth/completeOtpSignIn.ts'
import type {
  StartOtpSignInParameters,
  StartOtpSignInReturnType,
} from '../../core/actions/auth/startOtpSignIn.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { completeOtpSignInMutationOptions } from '../../core/query/completeOtpSignIn.ts'
import { startOtpSignInMutationOptions } from '../../core/query/startOtpSignIn.ts'
import { pendingOtpOf } from '../../core/session/createPendingOtpStore.ts'
import { type ClientParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type VerifyOtpCodeVariables = {
  otpCode: string
  userName?: string | undefined
  signal?: AbortSignal | undefined
}
export type UseOtpSignInReturnType = {
  /** `contact` until a code was sent, then `code`, then `done`. */
  step: 'contact' | 'code' | 'done'
  /** The pending code's id, type and contact once sent. */
  otp: StartOtpSignInReturnType | undefined
  sendCode: UseMutationResult<StartOtpSignInReturnType, LatchkeyError, StartOtpSignInParameters>
  verifyCode: UseMutationResult<CompleteOtpSignInReturnType, LatchkeyError, VerifyOtpCodeVariables>
  /** Back to the contact step (e.g. "use another e-mail"). */
  reset: () => void
}

/** E-mail/SMS sign-in in two steps: `sendCode.mutate({ otpType, contact })`, then `verifyCode.mutate({ otpCode })`. */
export function useOtpSignIn(parameters: ClientParameter = {}): UseOtpSignInReturnType {
  const client = useLatchkey(parameters)
  // The code itself is kept by the client (`client.pendingOtps`); this hook remembers which one it sent.
  const [otpId, setOtpId] = useState<string>()
  const otp = useStore(client.pendingOtps, (state) => pendingOtpOf(state, otpId))
  const sendCode = useLatchkeyMutation(startOtpSignInMutationOptions(client), {
    onSuccess: (started) => setOtpId(started.otpId),
  })
  const complete = completeOtpSignInMutationOptions(client)
  const verifyCode = useLatchkeyMutation<CompleteOtpSignInReturnType, VerifyOtpCodeVariables>(
    {
      ...complete,
      mutationFn: (variables) => complete.mutationFn({ ...(otp as StartOtpSignInReturnType), ...variables }),
    },
    undefined,
  )
  const reset = useCallback(() => {
    setOtpId(undefined)
    sendCode.reset()
    verifyCode.reset()
  }, [sendCode.reset, verifyCode.reset])
  return { step: verifyCode.isSuccess ? 'done' : otp ? 'code' : 'contact', otp, sendCode, verifyCode, reset }
}
