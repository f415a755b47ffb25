import type { OtpType } from '@latchkey/protocol'
import { createStore, type StoreApi } from 'zustand/vanilla'

/** An e-mail/SMS code that was sent: what `completeOtpSignIn` needs besides the code itself. */
export interface PendingOtp {
  otpId: string
  otpType: OtpType
  contact: string
  /** The signed key the code is encrypted to in `completeOtpSignIn` (`otp_init_v2`). */
  otpEncryptionTargetBundle: string
}

export interface PendingOtpState {
  /** The codes this client sent, oldest first; bounded to the newest few. */
  started: readonly PendingOtp[]
}

/**
 * The client's OTP sign-ins in progress, the one place they are kept: `startOtpSignIn` adds,
 * `completeOtpSignIn` finds a code's target by its id, and `useOtpSignIn` (so `<AuthModal/>`) reads
 * the one it started.
 */
export type PendingOtpStore = StoreApi<PendingOtpState>

const KEPT = 8

/** One store per client instance, like the session store. */
export const createPendingOtpStore = (): PendingOtpStore =>
  createStore<PendingOtpState>()(() => ({ started: [] }))

export function rememberPendingOtp(store: PendingOtpStore, otp: PendingOtp): void {
  store.setState((state) => ({
    started: [...state.started.filter((o) => o.otpId !== otp.otpId), otp].slice(-KEPT),
  }))
}

/** The pending code with this id, or undefined (never sent by this client, or long superseded). */
export const pendingOtpOf = (state: PendingOtpState, otpId: string | undefined): PendingOtp | undefined =>
  otpId === undefined ? undefined : state.started.find((o) => o.otpId === otpId)
