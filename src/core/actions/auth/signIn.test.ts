import { latestCode } from '@latchkey/service/testing'
import { ed25519 } from '@noble/curves/ed25519.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import type { Eip1193Provider, SolanaWallet } from '../../stampers/walletStampers.ts'
import { createClientFixture } from '../../test/fixtures.ts'
import type { OpenAuthorizationWindow } from '../../types.ts'
import { createWallet } from '../activities/createWallet.ts'
import { getUser } from '../queries/getUser.ts'
import { getWhoami } from '../queries/getWhoami.ts'
import { completeOtpSignIn } from './completeOtpSignIn.ts'
import { signInWithOAuth } from './signInWithOAuth.ts'
import { signInWithWallet } from './signInWithWallet.ts'
import { startOtpSignIn } from './startOtpSignIn.ts'

const outboxCode = (fx: Awaited<ReturnType<typeof createClientFixture>>, contact: string) =>
  latestCode(fx.harness.service, contact)

describe('OTP sign-in', () => {
  it('signs up a new e-mail, then logs the same person in again', async () => {
    const fx = await createClientFixture()
    const contact = `ada+${crypto.randomUUID().slice(0, 6)}@example.com`
    const first = await startOtpSignIn(fx.client, { otpType: 'OTP_TYPE_EMAIL', contact })
    const signUp = await completeOtpSignIn(fx.client, {
      ...first,
      otpCode: await outboxCode(fx, contact),
      userName: 'Ada',
    })
    expect(signUp.created).toBe(true)
    expect(signUp.session).toMatchObject({
      method: 'otp',
      label: contact,
      status: 'active',
      sessionType: 'SESSION_TYPE_READ_WRITE',
    })
    expect((await getUser(fx.client, { userId: signUp.session.userId })).user).toMatchObject({
      userName: 'Ada',
      userEmail: contact,
    })
    await createWallet(fx.client, { walletName: 'Main' })

    const again = await startOtpSignIn(fx.client, { otpType: 'OTP_TYPE_EMAIL', contact })
    const login = await completeOtpSignIn(fx.client, { ...again, otpCode: await outboxCode(fx, contact) })
    expect(login.created).toBe(false)
    expect(login.session.organizationId).toBe(signUp.session.organizationId)
    expect(login.session.userId).toBe(signUp.session.userId)
    expect((await getWhoami(fx.client, {})).organizationId).toBe(signUp.session.organizationId)
  })

  it('signs in by SMS, and a wrong code is a typed OTP_INVALID that leaves no key behind', async () => {
    const fx = await createClientFixture()
    const contact = '+14155550123'
    const otp = await startOtpSignIn(fx.client, { otpType: 'OTP_TYPE_SMS', contact })
    const code = await outboxCode(fx, contact)
    const wrong = code === '000000' ? '111111' : '000000'
    await expect(completeOtpSignIn(fx.client, { ...otp, otpCode: wrong })).rejects.toMatchObject({
      code: 'OTP_INVALID',
    })
    expect(await fx.client.keyStore.list()).toEqual([])
    const { session, created } = await completeOtpSignIn(fx.client, { ...otp, otpCode: code })
    expect({ created, method: session.method, label: session.label }).toEqual({
      created: true,
      method: 'otp',
      label: contact,
    })
  })

  it('rejects a malformed contact with a typed error', async () => {
    const fx = await createClientFixture()
    await expect(startOtpSignIn(fx.client, { otpType: 'OTP_TYPE_SMS', contact: '12' })).rejects.toMatchObject(
      {
        code: 'CONTACT_INVALID',
      },
    )
  })
})

/** Drives the dev identity provider's authorize form with fetch, as a person would in the popup. */
const devIdpWindow =
  (
    fx: Awaited<ReturnType<typeof createClientFixture>>,
    person: { email: string; name: string },
    tamper?: (url: URL) => void,
  ): OpenAuthorizationWindow =>
  async ({ url }) => {
    const page = await fx.harness.service.fetch(url)
    expect(page.status).toBe(200)
    const form = new URLSearchParams(new URL(url).searchParams)
    form.set('email', person.email)
    form.set('name', person.name)
    form.set('action', 'continue')
    const action = new URL('authorize', url)
    const reply = await fx.harness.service.fetch(action.toString().split('?')[0] as string, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    })
    const location = new URL(reply.headers.get('location') as string)
    tamper?.(location)
    return location.toString()
  }

describe('OAuth sign-in through the dev identity provider', () => {
  const redirectUri = 'http://localhost:5173/oauth/callback'

  it('signs up on first use, logs in on the next, with PKCE, state and the key-bound nonce', async () => {
    const fx = await createClientFixture({ oauth: { redirectUri } })
    const person = { email: `grace+${crypto.randomUUID().slice(0, 6)}@example.com`, name: 'Grace' }
    const first = await signInWithOAuth(fx.client, {
      provider: 'google',
      openAuthorizationWindow: devIdpWindow(fx, person),
    })
    expect(first.created).toBe(true)
    expect(first.session).toMatchObject({ method: 'oauth', label: person.email, status: 'active' })
    const { user } = await getUser(fx.client, { userId: first.session.userId })
    expect(user.oauthProviders.map((p) => p.providerName)).toEqual(['OAUTH2_PROVIDER_GOOGLE'])
    const second = await signInWithOAuth(fx.client, {
      provider: 'google',
      openAuthorizationWindow: devIdpWindow(fx, person),
    })
    expect(second.created).toBe(false)
    expect(second.session.userId).toBe(first.session.userId)
    expect(Object.keys(fx.client.store.getState().sessions)).toHaveLength(2)
  })

  it('refuses a redirect whose state was changed, or that goes elsewhere', async () => {
    const fx = await createClientFixture({ oauth: { redirectUri } })
    const person = { email: 'mallory@example.com', name: 'M' }
    await expect(
      signInWithOAuth(fx.client, {
        provider: 'google',
        openAuthorizationWindow: devIdpWindow(fx, person, (url) => url.searchParams.set('state', 'forged')),
      }),
    ).rejects.toMatchObject({ code: 'OAUTH_STATE_MISMATCH' })
    await expect(
      signInWithOAuth(fx.client, {
        provider: 'google',
        openAuthorizationWindow: devIdpWindow(fx, person, (url) => {
          url.host = 'evil.example'
        }),
      }),
    ).rejects.toMatchObject({ code: 'OAUTH_STATE_MISMATCH' })
    expect(fx.client.store.getState().status).toBe('signed-out')
    expect(await fx.client.keyStore.list()).toEqual([])
  })
})

/** A minimal EIP-1193 provider over a real secp256k1 key (what MetaMask does for personal_sign). */
function fakeEthereumWallet() {
  const secret = secp256k1.utils.randomSecretKey()
  const address = `0x${bytesToHex(keccak_256(secp256k1.getPublicKey(secret, false).subarray(1)).subarray(12))}`
  const provider: Eip1193Provider = {
    async request({ method, params }) {
      if (method === 'eth_requestAccounts') return [address]
      if (method !== 'personal_sign') throw Object.assign(new Error('unsupported'), { code: 4200 })
      const message = hexToBytes(((params as string[])[0] as string).slice(2))
      const prefix = new TextEncoder().encode(`\x19Ethereum Signed Message:\n${message.length}`)
      const digest = keccak_256(new Uint8Array([...prefix, ...message]))
      const sig = secp256k1.sign(digest, secret, { prehash: false, format: 'recovered' })
      // noble's recovered format is recovery‖r‖s; wallets answer r‖s‖v with v = 27 + recovery.
      return `0x${bytesToHex(sig.subarray(1))}${(27 + (sig[0] as number)).toString(16)}`
    },
  }
  return { provider, address }
}

describe('external wallet sign-in', () => {
  it('signs up and logs in with an Ethereum wallet (EIP-191 stamp, one prompt each)', async () => {
    const fx = await createClientFixture()
    const { provider, address } = fakeEthereumWallet()
    let prompts = 0
    const counting: Eip1193Provider = {
      request: (args) => {
        if (args.method === 'personal_sign') prompts++
        return provider.request(args)
      },
    }
    const first = await signInWithWallet(fx.client, { wallet: { type: 'ethereum', provider: counting } })
    expect({ created: first.created, address: first.address, prompts }).toEqual({
      created: true,
      address,
      prompts: 1,
    })
    const second = await signInWithWallet(fx.client, { wallet: { type: 'ethereum', provider: counting } })
    expect({ created: second.created, prompts }).toEqual({ created: false, prompts: 2 })
    expect(second.session.userId).toBe(first.session.userId)
    expect((await getWhoami(fx.client, {})).organizationId).toBe(first.session.organizationId)
  })

  it('signs up and logs in with a Solana (Wallet Standard) wallet, ed25519 stamp', async () => {
    const fx = await createClientFixture()
    const secret = ed25519.utils.randomSecretKey()
    const publicKey = ed25519.getPublicKey(secret)
    const wallet: SolanaWallet = {
      name: 'Test Solana',
      accounts: [{ address: 'solana-test', publicKey }],
      features: {
        'solana:signMessage': {
          signMessage: async ({ message }: { message: Uint8Array }) => [
            { signedMessage: message, signature: ed25519.sign(message, secret) },
          ],
        },
      },
    }
    const first = await signInWithWallet(fx.client, { wallet: { type: 'solana', wallet } })
    const second = await signInWithWallet(fx.client, { wallet: { type: 'solana', wallet } })
    expect([first.created, second.created]).toEqual([true, false])
    expect(second.session.organizationId).toBe(first.session.organizationId)
  })

  it('a rejected wallet prompt is USER_CANCELLED', async () => {
    const fx = await createClientFixture()
    const provider: Eip1193Provider = {
      request: async ({ method }) => {
        if (method === 'eth_requestAccounts') return ['0x0000000000000000000000000000000000000001']
        throw Object.assign(new Error('User rejected'), { code: 4001 })
      },
    }
    await expect(
      signInWithWallet(fx.client, { wallet: { type: 'ethereum', provider } }),
    ).rejects.toMatchObject({
      code: 'USER_CANCELLED',
    })
  })
})
