// @vitest-environment happy-dom
// The real @simplewebauthn/browser code runs against a software authenticator behind
// navigator.credentials (installSoftAuthenticator from @latchkey/service/testing), and the real in-process service.

import { installSoftAuthenticator, type SoftAuthenticator } from '@latchkey/service/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createClientFixture } from '../../test/fixtures.ts'
import { createWallet } from '../activities/createWallet.ts'
import { getUser } from '../queries/getUser.ts'
import { getWhoami } from '../queries/getWhoami.ts'
import { addPasskey } from './addPasskey.ts'
import { signInWithPasskey } from './signInWithPasskey.ts'
import { signUpWithPasskey } from './signUpWithPasskey.ts'

let authenticator: SoftAuthenticator
beforeEach(() => {
  authenticator = installSoftAuthenticator({ origin: 'http://localhost:5173' })
})
afterEach(() => authenticator.uninstall())

describe('passkeys', () => {
  it('signs up with a new passkey in one prompt (its creation), then logs in with it', async () => {
    const fx = await createClientFixture({ passkey: { rpId: 'localhost' } })
    const signUp = await signUpWithPasskey(fx.client, { userName: 'Pat' })
    expect(authenticator.credentials).toHaveLength(1)
    // Created, never asked to sign: the sign-up's own short-lived key signed the login.
    expect(authenticator.credentials[0]!.counter).toBe(0)
    expect(signUp.session).toMatchObject({
      method: 'passkey',
      status: 'active',
      organizationId: signUp.organizationId,
    })
    const { user } = await getUser(fx.client, { userId: signUp.userId })
    expect(user.authenticators.map((a) => a.credentialId)).toEqual([signUp.credentialId])
    await createWallet(fx.client, { walletName: 'Main' })

    const { session } = await signInWithPasskey(fx.client)
    expect(session).toMatchObject({
      method: 'passkey',
      userId: signUp.userId,
      organizationId: signUp.organizationId,
    })
    expect(fx.client.store.getState().activeId).toBe(session.id)
    expect((await getWhoami(fx.client, {})).userId).toBe(signUp.userId)
  })

  it('adds a second passkey to a signed-in user', async () => {
    const fx = await createClientFixture({ passkey: { rpId: 'localhost' } })
    const { userId } = await signUpWithPasskey(fx.client, { userName: 'Two keys' })
    const added = await addPasskey(fx.client, { authenticatorName: 'Laptop' })
    const { user } = await getUser(fx.client, { userId })
    expect(user.authenticators.map((a) => a.authenticatorName).sort()).toEqual([
      'Laptop',
      "Two keys's passkey",
    ])
    expect(user.authenticators.find((a) => a.authenticatorName === 'Laptop')?.authenticatorId).toBe(
      added.authenticatorId,
    )
    // The added passkey's registration was the first to show it, so it signs in from the parent.
    const { session } = await signInWithPasskey(fx.client, { allowCredentialIds: [added.credentialId] })
    expect(session).toMatchObject({ userId, method: 'passkey' })
  })

  it('adds a passkey after a sign-up without one (an OTP sign-up), and signs in with it', async () => {
    const fx = await createClientFixture({ passkey: { rpId: 'localhost' } })
    const { userIds } = await fx.signUpDirect()
    await createWallet(fx.client, { walletName: 'Main' })
    const added = await addPasskey(fx.client, { authenticatorName: 'Phone' })
    // Created, never asked to sign until the sign-in.
    expect(authenticator.credentials[0]!.counter).toBe(0)
    const { session } = await signInWithPasskey(fx.client, { allowCredentialIds: [added.credentialId] })
    expect(session).toMatchObject({ userId: userIds[0], method: 'passkey' })
  })

  it('a dismissed passkey prompt is USER_CANCELLED and leaves no session or key', async () => {
    const fx = await createClientFixture({ passkey: { rpId: 'localhost' } })
    // No passkey registered: the authenticator answers NotAllowedError, as a dismissed prompt does.
    await expect(signInWithPasskey(fx.client)).rejects.toMatchObject({ code: 'USER_CANCELLED' })
    expect(fx.client.store.getState().status).toBe('signed-out')
    expect(await fx.client.keyStore.list()).toEqual([])
  })
})
