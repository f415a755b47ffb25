import { describe, expect, it } from 'vitest'
import {
  createPendingOtpStore,
  type PendingOtp,
  pendingOtpOf,
  rememberPendingOtp,
} from './createPendingOtpStore.ts'

const otp = (n: number): PendingOtp => ({
  otpId: `otp-${n}`,
  otpType: 'OTP_TYPE_EMAIL',
  contact: `person${n}@example.com`,
  otpEncryptionTargetBundle: `bundle-${n}`,
})

describe('the pending OTP store', () => {
  it('keeps the newest eight codes, each once, and finds them by id', () => {
    const store = createPendingOtpStore()
    for (let n = 1; n <= 10; n++) rememberPendingOtp(store, otp(n))
    rememberPendingOtp(store, { ...otp(5), contact: 'again@example.com' })
    expect(store.getState().started.map((o) => o.otpId)).toEqual([
      'otp-3',
      'otp-4',
      'otp-6',
      'otp-7',
      'otp-8',
      'otp-9',
      'otp-10',
      'otp-5',
    ])
    expect(pendingOtpOf(store.getState(), 'otp-5')).toEqual({ ...otp(5), contact: 'again@example.com' })
    expect(pendingOtpOf(store.getState(), 'otp-2')).toBeUndefined()
    expect(pendingOtpOf(store.getState(), undefined)).toBeUndefined()
  })

  it('belongs to one client: two stores share nothing', () => {
    const [a, b] = [createPendingOtpStore(), createPendingOtpStore()]
    rememberPendingOtp(a, otp(1))
    expect(b.getState().started).toEqual([])
  })
})
