import { softPasskey } from '@latchkey/service/testing'
import { beforeEach, describe, expect, it } from 'vitest'
import { MfaRequiredError } from '../../errors.ts'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { totpCode } from '../../test/totpCode.ts'
import { getMfaFactors } from '../queries/getMfaFactors.ts'
import { getMfaPolicies } from '../queries/getMfaPolicies.ts'
import { completeMfa } from './completeMfa.ts'
import { confirmTotpFactor } from './confirmTotpFactor.ts'
import { createAuthenticators } from './createAuthenticators.ts'
import { createMfaPolicy } from './createMfaPolicy.ts'
import { createRecoveryCodes } from './createRecoveryCodes.ts'
import { createTotpFactor } from './createTotpFactor.ts'
import { createWallet } from './createWallet.ts'
import { deleteMfaPolicy } from './deleteMfaPolicy.ts'
import { deleteTotpFactor } from './deleteTotpFactor.ts'
import { exportWallet } from './exportWallet.ts'
import { signMessage } from './signMessage.ts'

const TOTP = { any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' as const }] }

/** The error an action threw, asserted to be a second-factor challenge. */
async function challengeOf<T>(promise: Promise<T>): Promise<MfaRequiredError<T>> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(MfaRequiredError)
  return error as MfaRequiredError<T>
}

describe('MFA actions against the local service', () => {
  let fx: ClientFixture
  // The service's clock, moved a step ahead when a test needs a fresh TOTP code.
  let offsetMs = 0
  let userId: string
  const now = () => Date.now() + offsetMs
  beforeEach(async () => {
    offsetMs = 0
    fx = await createClientFixture({}, { clock: { now } } as never)
    ;[userId] = (await fx.signUpDirect()).userIds as [string]
  })

  /** Enrols and confirms a TOTP factor; answers its secret. */
  async function enrol(): Promise<{ factorId: string; secret: string }> {
    const { factorId, secret, otpauthUri } = await createTotpFactor(fx.client, { factorName: 'Phone' })
    expect(otpauthUri).toMatch(/^otpauth:\/\/totp\/.+\?.*secret=/)
    await expect(confirmTotpFactor(fx.client, { factorId, code: '000000' })).rejects.toMatchObject({
      code: 'OTP_INVALID',
    })
    await confirmTotpFactor(fx.client, { factorId, code: totpCode(secret, now()) })
    return { factorId, secret }
  }

  it('enrols a TOTP factor, confirms it with a first code, lists it and makes recovery codes', async () => {
    const { factorId } = await enrol()
    const { recoveryCodes } = await createRecoveryCodes(fx.client, {})
    expect(recoveryCodes).toHaveLength(10)
    const factors = await getMfaFactors(fx.client)
    expect(factors.factors).toMatchObject([{ factorId, factorName: 'Phone', confirmed: true }])
    expect(factors.recoveryCodesRemaining).toBe(10)
  })

  it('an export an MFA policy matches throws MfaRequiredError; the right code finishes it, once', async () => {
    const { secret } = await enrol()
    const { walletId } = await createWallet(fx.client, { walletName: 'Main' })
    await createMfaPolicy(fx.client, {
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [TOTP],
      order: 0,
    })
    expect((await getMfaPolicies(fx.client)).mfaPolicies).toHaveLength(1)

    const challenge = await challengeOf(exportWallet(fx.client, { walletId }))
    expect(challenge).toMatchObject({ code: 'MFA_REQUIRED', methods: ['AUTHENTICATION_TYPE_LATCHKEY_TOTP'] })
    expect(challenge.steps).toHaveLength(1)
    // A wrong code is refused and leaves it waiting; the code already used to confirm is a replay.
    await expect(completeMfa(fx.client, { challenge, totpCode: '123456' })).rejects.toMatchObject({
      code: 'OTP_INVALID',
    })
    await expect(
      completeMfa(fx.client, { challenge, totpCode: totpCode(secret, now()) }),
    ).rejects.toMatchObject({
      code: 'OTP_INVALID',
    })
    offsetMs = 30_000
    const exported = await completeMfa(fx.client, { challenge, totpCode: totpCode(secret, now()) })
    expect(exported.walletId).toBe(walletId)
    expect(exported.mnemonic.split(' ')).toHaveLength(12)
    // Once: the activity ran; satisfying it again is refused, not a second export.
    offsetMs = 60_000
    await expect(
      completeMfa(fx.client, { challenge, totpCode: totpCode(secret, now()) }),
    ).rejects.toMatchObject({ status: 412 })
  })

  it('a recovery code finishes a waiting signature once; a used one is refused', async () => {
    await enrol()
    const { recoveryCodes } = await createRecoveryCodes(fx.client, {})
    const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['ethereum'] })
    await createMfaPolicy(fx.client, {
      mfaPolicyName: 'signing needs a code',
      condition: "activity.action == 'SIGN'",
      requiredAuthenticationMethods: [TOTP],
      order: 0,
    })
    const signWith = addresses[0]!
    const first = await challengeOf(signMessage(fx.client, { signWith, message: 'hello' }))
    const signed = await completeMfa(fx.client, { challenge: first, recoveryCode: recoveryCodes[0]! })
    expect(signed.signature).toMatch(/^0x[0-9a-f]{130}$/)
    const second = await challengeOf(signMessage(fx.client, { signWith, message: 'again' }))
    await expect(
      completeMfa(fx.client, { challenge: second, recoveryCode: recoveryCodes[0]! }),
    ).rejects.toMatchObject({ code: 'OTP_INVALID' })
    expect((await getMfaFactors(fx.client)).recoveryCodesRemaining).toBe(9)
  })

  it('removing the factor or the policy waits for the policy: a session alone cannot switch MFA off', async () => {
    const { factorId, secret } = await enrol()
    const { mfaPolicyId } = await createMfaPolicy(fx.client, {
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [TOTP],
      order: 0,
    })
    // The last factor the policy needs cannot go: it could never be enrolled again. Refused when
    // asked, before a code is spent on it.
    await expect(deleteTotpFactor(fx.client, { factorId })).rejects.toMatchObject({
      code: 'FIELD_INVALID',
      details: { field: 'parameters.factorId' },
    })
    const policyRemoval = await challengeOf(deleteMfaPolicy(fx.client, { mfaPolicyId }))
    offsetMs = 30_000
    expect(
      await completeMfa(fx.client, { challenge: policyRemoval, totpCode: totpCode(secret, now()) }),
    ).toEqual({ mfaPolicyId })
    // With no policy left nothing waits.
    expect(await deleteTotpFactor(fx.client, { factorId })).toEqual({ factorId })
    expect((await getMfaFactors(fx.client)).factors).toEqual([])
  })

  it('a session cannot enrol a first factor of its own while a policy is on the user', async () => {
    // The user's passkey (a policy only a passkey proves is refused to a user without one).
    await createAuthenticators(fx.client, { userId, authenticators: [softPasskey().register()] })
    await createMfaPolicy(fx.client, {
      mfaPolicyName: 'exports need a passkey',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] }],
      order: 0,
    })
    const enrolment = await challengeOf(createTotpFactor(fx.client, {}))
    expect(enrolment.methods).toEqual(['AUTHENTICATION_TYPE_PASSKEY'])
    expect((await getMfaFactors(fx.client)).factors).toEqual([])
    await challengeOf(createRecoveryCodes(fx.client, {}))
  })
})
