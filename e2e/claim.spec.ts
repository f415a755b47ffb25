// Pregenerated wallets claimed in Chromium (issue 40): the operator's back end (a Node client of
// latchkey/core with the parent's root API key, examples/migrate/pregenerate.ts) creates a
// person's sub-organization and wallet from an e-mail address; that person's e-mail OTP sign-in in
// the playground lands there and sees the wallet. Before that, an attacker with an account of
// their own put the same address on it without proof: it never routes anyone's login. Two browsers
// claiming at once land in the one account, which still holds one wallet. And an imported passkey
// (credential id and COSE public key, as a migration carries them) signs in with the original
// credential in Chromium's virtual authenticator.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import {
  completeOtpSignIn,
  createLatchkey,
  getWhoami,
  type Latchkey,
  query,
  startOtpSignIn,
  submit,
} from 'latchkey/core'
import { operatorClient, pregenerateByEmail } from '../examples/migrate/pregenerate.ts'
import { expect, openPlayground, readOtpCode, stack, test, uniqueEmail } from './fixtures.ts'
import { addressesOf, enterOtp, expectSignedIn, openSignIn, walletsCard } from './flows.ts'

const service = stack.services.default

const operator = () =>
  operatorClient({
    baseUrl: service.baseUrl,
    authProxyConfigId: service.authProxyConfigId,
    organizationId: service.organizationId,
    apiPrivateKeyHex: service.apiPrivateKey,
  })

/** Someone with an account of their own (e-mail OTP sign-up from Node), signed in. */
async function attackerAccount(): Promise<Latchkey> {
  const client = createLatchkey({
    baseUrl: service.baseUrl,
    authProxyUrl: service.authProxyUrl,
    authProxyConfigId: service.authProxyConfigId,
    organizationId: service.organizationId,
    keyStore: 'memory',
    storage: null,
    // From the app's origin, as the attacker's own browser would call the auth proxy.
    fetch: (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set('origin', new URL(stack.playgroundUrl).origin)
      return fetch(input, { ...init, headers })
    },
  })
  const contact = uniqueEmail('attacker')
  const since = Date.now()
  const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact })
  await completeOtpSignIn(client, { ...started, otpCode: await readOtpCode(service, contact, since) })
  return client
}

/** The parent's sub-organizations a login by `email` would find (the auth proxy's lookup). */
const accountsOf = (operator: Latchkey, email: string) =>
  query(operator, 'list_suborgs', {
    organizationId: service.organizationId,
    filterType: 'EMAIL',
    filterValue: email,
  }).then((reply) => reply.organizationIds)

interface OutboxMessage {
  otpId: string
  contact: string
  code: string
}

/** The codes sent to `contact`, waiting until there are `count`. */
async function codesFor(contact: string, count: number): Promise<OutboxMessage[]> {
  for (let i = 0; i < 100; i++) {
    const { messages } = (await (await fetch(`${service.baseUrl}/dev/outbox`)).json()) as {
      messages: OutboxMessage[]
    }
    const mine = messages.filter((m) => m.contact === contact)
    if (mine.length >= count) return mine
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`fewer than ${count} codes for ${contact} in the outbox`)
}

test('a pregenerated wallet is claimed by e-mail OTP in the browser: once, by the contact’s owner only', async ({
  browser,
}) => {
  const email = uniqueEmail('claim')

  // The attacker, first: their own account, then the victim's address set on it without proof
  // (after adding an API key of their own: their verified e-mail is no longer their only way in,
  // so the service lets them swap it for an unproven one, stored unverified).
  const attacker = await attackerAccount()
  const me = await getWhoami(attacker, {})
  await submit(attacker, 'create_api_keys', {
    userId: me.userId,
    apiKeys: [
      {
        apiKeyName: 'attacker key',
        publicKey: bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), true)),
        curveType: 'API_KEY_CURVE_P256',
      },
    ],
  })
  await submit(attacker, 'update_user_email', { userId: me.userId, userEmail: email })

  // The operator's back end pregenerates the person's account and wallet: the attacker's unproven
  // address does not stand in its way, and is not what finds accounts.
  const backend = await operator()
  const pregenerated = await pregenerateByEmail(backend, { email, walletName: 'Airdrop' })
  expect(await accountsOf(backend, email)).toEqual([pregenerated.subOrganizationId])

  // Two browsers claim at once: each asks for a code, then both enter theirs together.
  const contexts = await Promise.all([browser.newContext(), browser.newContext()])
  const pages = await Promise.all(contexts.map((context) => context.newPage()))
  const sent: string[] = []
  for (const page of pages) {
    await openPlayground(page)
    const dialog = await openSignIn(page)
    await dialog.getByLabel('Email address').fill(email)
    await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
    await expect(dialog.getByRole('heading', { name: 'Enter the code' })).toBeVisible()
    const codes = await codesFor(email, sent.length + 1)
    sent.push(codes.find((m) => !sent.includes(m.otpId))!.otpId)
  }
  const codes = await codesFor(email, 2)
  await Promise.all(pages.map((page, i) => enterOtp(page, codes.find((m) => m.otpId === sent[i])!.code)))
  await Promise.all(pages.map((page) => expectSignedIn(page)))

  // Both landed in the pregenerated account and see its one wallet, at the operator's address.
  for (const page of pages) {
    const wallets = walletsCard(page)
    const airdrop = wallets.getByRole('article', { name: 'Airdrop' })
    await expect(airdrop).toBeVisible({ timeout: 20_000 })
    await expect(wallets.getByRole('article')).toHaveCount(1)
    expect(await addressesOf(airdrop, 'Ethereum')).toEqual([pregenerated.address])
  }
  // Still one account for the address, and the attacker's is not it.
  expect(await accountsOf(backend, email)).toEqual([pregenerated.subOrganizationId])
  expect(me.organizationId).not.toBe(pregenerated.subOrganizationId)

  // Nor can the attacker have codes sent to the address from their own account.
  await expect(
    submit(attacker, 'init_otp', { otpType: 'OTP_TYPE_EMAIL', contact: email }),
  ).rejects.toMatchObject({ code: 'PERMISSION_DENIED' })

  attacker.destroy()
  backend.destroy()
  await Promise.all(contexts.map((context) => context.close()))
})

/** A P-256 passkey made elsewhere: its COSE public key (what an import carries) and its PKCS#8 private key. */
function portablePasskey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = publicKey.export({ format: 'jwk' })
  const coordinate = (value: string | undefined) => Buffer.from(value!, 'base64url')
  // CBOR map {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}.
  const cose = Buffer.concat([
    Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
    coordinate(jwk.x),
    Buffer.from([0x22, 0x58, 0x20]),
    coordinate(jwk.y),
  ])
  return {
    credentialId: randomBytes(16),
    cosePublicKey: cose.toString('base64url'),
    pkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
  }
}

test('an imported passkey signs in: a virtual authenticator holding the original credential', async ({
  page,
}) => {
  const passkey = portablePasskey()
  const backend = await operator()
  const imported = await submit(backend, 'latchkey_import_user', {
    externalId: `passkey-${passkey.credentialId.toString('hex')}`,
    userName: 'Moved over',
    passkeys: [
      {
        credentialId: passkey.credentialId.toString('base64url'),
        cosePublicKey: passkey.cosePublicKey,
        name: 'Old laptop',
      },
    ],
  })
  expect(imported.result.subOrganizationId).toBeTruthy()
  backend.destroy()

  // The person's authenticator still holds the credential made for the old provider (same domain).
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable', { enableUI: false })
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  await cdp.send('WebAuthn.addCredential', {
    authenticatorId,
    credential: {
      credentialId: passkey.credentialId.toString('base64'),
      isResidentCredential: true,
      rpId: new URL(stack.playgroundUrl).hostname,
      privateKey: passkey.pkcs8,
      userHandle: Buffer.from('moved-over').toString('base64'),
      signCount: 0,
    },
  })

  await openPlayground(page)
  const dialog = await openSignIn(page)
  await dialog.getByRole('button', { name: 'Continue with a passkey' }).click()
  await expectSignedIn(page)
  const profile = page.getByRole('region', { name: 'Profile' })
  await expect(profile.getByText('Old laptop').first()).toBeVisible()
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
  expect(credentials[0]!.signCount).toBeGreaterThan(0)
})
