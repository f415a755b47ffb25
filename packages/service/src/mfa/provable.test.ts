import { describe, expect, it } from 'vitest'
import { unmatchedStep } from './provable.ts'

// unmatchedStep on its own: which step of a policy a user holding these proofs cannot reach.

const method = (type: string, id?: string) => ({ type: `AUTHENTICATION_TYPE_${type}`, ...(id ? { id } : {}) })
const steps = (...methods: ReturnType<typeof method>[][]) => methods.map((any) => ({ any }))
const session = { type: 'AUTHENTICATION_TYPE_SESSION', id: '', count: 1, stamps: true }
const passkey = (id: string) => ({ type: 'AUTHENTICATION_TYPE_PASSKEY', id, count: 1, stamps: true })
const factor = (id: string) => ({ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP', id, count: 1 })
const recovery = (count: number) => ({
  type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP',
  id: '',
  anyId: true,
  count,
})
const email = { type: 'AUTHENTICATION_TYPE_EMAIL_OTP', id: '', count: 1 }

describe('unmatchedStep', () => {
  it('gives each step a proof of its own, in whatever order fits (augmenting a greedy first choice)', () => {
    // Step 1 may take either passkey; step 2 only P1: P2 must go to step 1.
    const policy = steps([method('PASSKEY')], [method('PASSKEY', 'P1')])
    expect(unmatchedStep(policy, [session, passkey('P1'), passkey('P2')])).toBe(-1)
    expect(unmatchedStep(policy, [session, passkey('P1')])).toBe(1)
  })

  it('one e-mail, one session, one factor each prove one step; each recovery code one TOTP step', () => {
    expect(unmatchedStep(steps([method('EMAIL_OTP')], [method('EMAIL_OTP')]), [session, email])).toBe(1)
    const twice = steps([method('LATCHKEY_TOTP', 'F1')], [method('LATCHKEY_TOTP', 'F1')])
    expect(unmatchedStep(twice, [session, factor('F1')])).toBe(1)
    expect(unmatchedStep(twice, [session, factor('F1'), recovery(1)])).toBe(-1)
    const thrice = steps(...Array.from({ length: 3 }, () => [method('LATCHKEY_TOTP', 'F1')]))
    expect(unmatchedStep(thrice, [session, recovery(2)])).toBe(2)
    expect(unmatchedStep(thrice, [session, recovery(10)])).toBe(-1)
  })

  it('the credential an activity is sent with proves the first step it can: some credential must leave the rest provable', () => {
    // Sent with P1 or with a session, the first step takes it; the step needing it again is stuck.
    const policy = steps(
      [method('SESSION'), method('PASSKEY', 'P1'), method('LATCHKEY_TOTP')],
      [method('SESSION')],
      [method('PASSKEY', 'P1')],
    )
    expect(unmatchedStep(policy, [session, passkey('P1'), factor('F1')])).toBe(2)
    // A second passkey that proves no first step lets the user send with it: the factor then
    // proves the first step, the session the second, P1 the third.
    expect(unmatchedStep(policy, [session, passkey('P1'), passkey('P2'), factor('F1')])).toBe(-1)
  })

  it('names the first step that cannot be reached, the furthest any credential gets', () => {
    expect(
      unmatchedStep(steps([method('SESSION')], [method('PASSKEY')], [method('SESSION')]), [session]),
    ).toBe(1)
    expect(unmatchedStep(steps([method('API_KEY')]), [session])).toBe(0)
  })
})
