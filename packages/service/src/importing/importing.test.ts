// The importing wing over the activity API: one person per `latchkey_import_user`, wallets
// encrypted to the organization's import key, the first sign-in landing in the imported account.

import { decodeJwtClaims, PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { hpkeSeal } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { type Hex, recoverMessageAddress } from 'viem'
import { english, generateMnemonic, mnemonicToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { accountClaimId } from '../kernel/accountClaims.ts'
import { oidcNonce } from '../signin/oauth/oidcNonce.ts'
import { signInState } from '../signin/signInState.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  resultOf,
  testKey,
} from '../testing/harness.ts'

const APP = 'http://app.test'

async function proxy(h: Harness, path: string, body: unknown) {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: APP,
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

/** The import key's public half, read from the signed bundle of `latchkey_init_user_import`. */
async function importKey(h: Harness): Promise<Uint8Array> {
  const reply = await h.submit('latchkey_init_user_import', {})
  expect(reply.status).toBe(200)
  const bundle = JSON.parse(resultOf('latchkey_init_user_import', reply).importBundle) as { data: string }
  const data = JSON.parse(new TextDecoder().decode(hexToBytes(bundle.data))) as { targetPublic: string }
  return hexToBytes(data.targetPublic)
}

const encrypt = (secret: string, receiverPublicKey: Uint8Array) =>
  JSON.stringify(hpkeSeal({ plaintext: utf8ToBytes(secret), receiverPublicKey }))

/** OTP through the auth proxy for `email`, then `otp_login` with `key`: the session's organization. */
async function otpLogin(h: Harness, email: string, key = testKey()) {
  const init = await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  expect(init.status).toBe(200)
  const outbox = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(email)}`)
  // Its own code: another login to the same address may have sent one too (newest first).
  const message = ((await outbox.json()) as { messages: { otpId: string; code: string }[] }).messages.find(
    (m) => m.otpId === init.body.otpId,
  )
  const verify = await proxy(h, 'otp_verify', {
    otpId: init.body.otpId,
    otpCode: message!.code,
    public_key: key.publicKey,
  })
  expect(verify.status, JSON.stringify(verify.body)).toBe(200)
  const token = verify.body.verificationToken as string
  const signature = bytesToHex(
    p256.sign(utf8ToBytes(token), key.privateKey, { prehash: true, format: 'compact' }),
  )
  const login = await proxy(h, 'otp_login', {
    verificationToken: token,
    publicKey: key.publicKey,
    clientSignature: signature,
  })
  return { ...login, key }
}

/** A P-256 passkey's COSE public key (base64url), as an import carries it. */
function coseKeyOf(privateKey: Uint8Array): string {
  const point = p256.getPublicKey(privateKey, false)
  // CBOR map {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}.
  const cose = Uint8Array.from([
    ...[0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20],
    ...point.subarray(1, 33),
    ...[0x22, 0x58, 0x20],
    ...point.subarray(33),
  ])
  return Buffer.from(cose).toString('base64url')
}

const errorOf = (reply: { status: number; body: Json }) => ({
  status: reply.status,
  errorCode: reply.body?.details?.errorCode,
  field: reply.body?.details?.field,
})

describe('latchkey_import_user', () => {
  it('imports a person whose first OTP sign-in lands in the account, and whose wallet signs', async () => {
    const h = await createHarness()
    const mnemonic = generateMnemonic(english)
    const expected = mnemonicToAccount(mnemonic).address
    const reply = await h.submit('latchkey_import_user', {
      externalId: 'privy:did:1',
      email: 'Ada@Example.com',
      wallets: [
        {
          walletName: 'Main',
          encryptedBundle: encrypt(mnemonic, await importKey(h)),
          accounts: [ETHEREUM_ACCOUNT],
        },
      ],
    })
    expect(reply.status).toBe(200)
    const result = resultOf('latchkey_import_user', reply)
    expect(result.skipped).toBe(false)
    // The activity record holds only the ciphertext.
    expect(JSON.stringify(reply.body)).not.toContain(mnemonic.split(' ')[0]! + ' ' + mnemonic.split(' ')[1])

    const login = await otpLogin(h, 'ada@example.com')
    expect(login.status).toBe(200)
    const session = (login.body.session ?? login.body.credentialBundle) as string | undefined
    expect(login.body.organizationId ?? decodeJwtClaims(session!).organization_id).toBe(
      result.subOrganizationId,
    )

    const accounts = await h.query(
      'list_wallet_accounts',
      { organizationId: result.subOrganizationId, walletId: result.walletIds[0] },
      { as: login.key, organizationId: result.subOrganizationId },
    )
    expect(accounts.status).toBe(200)
    expect(accounts.body.accounts[0].address).toBe(expected)
    const message = 'imported and working'
    const { hashMessage } = await import('viem')
    const signed = await h.submit(
      'sign_raw_payload',
      {
        signWith: expected,
        payload: hashMessage(message),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      { as: login.key, organizationId: result.subOrganizationId },
    )
    expect(signed.status).toBe(200)
    const { r, s, v } = resultOf('sign_raw_payload', signed)
    const yParity = Number.parseInt(v, 16) % 27
    const signature = `0x${r}${s}${(27 + yParity).toString(16)}` as Hex
    expect(await recoverMessageAddress({ message, signature })).toBe(expected)
  })

  it('skips an external id imported before, even when two imports race', async () => {
    const h = await createHarness()
    const line = { externalId: 'u-7', email: 'race@example.com', userName: 'Race' }
    const replies = await Promise.all([
      h.submit('latchkey_import_user', line),
      h.submit('latchkey_import_user', { ...line, userName: 'Race again' }),
    ])
    const results = replies.map((reply) => resultOf('latchkey_import_user', reply))
    expect(results.map((r) => r.skipped).sort()).toEqual([false, true])
    expect(results[0].subOrganizationId).toBe(results[1].subOrganizationId)
    h.clock.advance(1000)
    const again = resultOf('latchkey_import_user', await h.submit('latchkey_import_user', line))
    expect(again).toMatchObject({ skipped: true, subOrganizationId: results[0].subOrganizationId })
    const subs = await h.query('list_suborgs', { organizationId: h.organizationId })
    expect(
      subs.body.organizationIds.filter((id: string) => id === results[0].subOrganizationId),
    ).toHaveLength(1)
  })

  it('refuses, naming the field: an unknown field, a bundle for another key, a contact or identity taken, a non-operator', async () => {
    const h = await createHarness()
    const key = await importKey(h)
    expect(
      errorOf(await h.submit('latchkey_import_user', { externalId: 'a', emial: 'x@example.com' })),
    ).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.emial',
    })
    const other = p256.getPublicKey(p256.utils.randomSecretKey(), false)
    const mnemonic = generateMnemonic(english)
    expect(
      errorOf(
        await h.submit('latchkey_import_user', {
          externalId: 'b',
          wallets: [
            { walletName: 'W', encryptedBundle: encrypt(mnemonic, other), accounts: [ETHEREUM_ACCOUNT] },
          ],
        }),
      ),
    ).toEqual({ status: 400, errorCode: 'BUNDLE_INVALID', field: 'parameters.wallets[0].encryptedBundle' })
    expect(
      errorOf(
        await h.submit('latchkey_import_user', {
          externalId: 'c',
          wallets: [
            {
              walletName: 'W',
              encryptedBundle: encrypt('not a mnemonic', key),
              accounts: [ETHEREUM_ACCOUNT],
            },
          ],
        }),
      ),
    ).toMatchObject({ status: 400, errorCode: 'BUNDLE_INVALID' })
    // Nothing of the refused lines was written.
    expect(
      (await h.query('list_suborgs', { organizationId: h.organizationId })).body.organizationIds,
    ).toHaveLength(0)

    const oauth = { issuer: 'https://accounts.google.com', subject: '1234' }
    expect(
      (
        await h.submit('latchkey_import_user', {
          externalId: 'd',
          email: 'd@example.com',
          oauthProviders: [oauth],
        })
      ).status,
    ).toBe(200)
    expect(
      errorOf(await h.submit('latchkey_import_user', { externalId: 'e', email: 'D@example.com' })),
    ).toMatchObject({
      status: 409,
      field: 'parameters.email',
    })
    expect(
      errorOf(await h.submit('latchkey_import_user', { externalId: 'f', oauthProviders: [oauth] })),
    ).toMatchObject({
      status: 409,
      field: 'parameters.oauthProviders[0]',
    })
    // A pregeneration through create_sub_organization meets the imported contact too.
    const pregenerate = await h.submit('create_sub_organization', {
      subOrganizationName: 'dup',
      rootUsers: [
        { userName: 'd', userEmail: 'd@example.com', apiKeys: [], authenticators: [], oauthProviders: [] },
      ],
      rootQuorumThreshold: 1,
    })
    expect(errorOf(pregenerate)).toMatchObject({ status: 409, field: 'parameters.rootUsers[0].userEmail' })

    // Inside a sub-organization nobody vouches for contacts: refused.
    const sub = await h.createSubOrganization()
    const inside = await h.submit(
      'latchkey_import_user',
      { externalId: 'g', email: 'g@example.com' },
      {
        as: sub.keys[0],
        organizationId: sub.organizationId,
      },
    )
    expect(errorOf(inside)).toMatchObject({ status: 403 })

    // A user of the organization who is not a root user is refused too, and before any wallet of
    // theirs is opened: the import's CPU is not theirs to spend.
    const member = testKey()
    resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'member',
            apiKeys: [member.apiKey('member')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    const cryptoJobs = async () =>
      ((await (await h.service.app.request('/dev/timings')).json()) as Record<string, { count: number }>)
        .crypto?.count ?? 0
    const before = await cryptoJobs()
    const byMember = await h.submit(
      'latchkey_import_user',
      {
        externalId: 'h',
        wallets: [{ walletName: 'W', encryptedBundle: encrypt(mnemonic, key), accounts: [ETHEREUM_ACCOUNT] }],
      },
      { as: member },
    )
    expect(errorOf(byMember)).toMatchObject({ status: 403 })
    expect(await cryptoJobs()).toBe(before)
  })
  it('refuses a passkey that could never sign in, naming the field: a COSE key without its point or off its curve, a counter past 32 bits', async () => {
    const h = await createHarness()
    const cose = (bytes: number[]) => Buffer.from(bytes).toString('base64url')
    const good = coseKeyOf(p256.utils.randomSecretKey())
    const offCurve = Buffer.from(good, 'base64url')
    offCurve[offCurve.length - 1]! ^= 1
    for (const [passkey, field] of [
      // An algorithm and nothing else; an EC2 P-256 key without x and y; a point off P-256.
      [{ cosePublicKey: cose([0xa1, 0x03, 0x26]) }, 'cosePublicKey'],
      [{ cosePublicKey: cose([0xa3, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01]) }, 'cosePublicKey'],
      [{ cosePublicKey: offCurve.toString('base64url') }, 'cosePublicKey'],
      // The authenticator's counter is 32 bits: a stored one above it refuses every later login.
      [{ cosePublicKey: good, counter: 2 ** 32 }, 'counter'],
    ] as const) {
      const reply = await h.submit('latchkey_import_user', {
        externalId: 'p',
        passkeys: [{ credentialId: 'cred-p', ...passkey }],
      })
      expect(errorOf(reply), JSON.stringify(passkey)).toMatchObject({
        status: 400,
        field: `parameters.passkeys[0].${field}`,
      })
    }
    // Nothing was written or claimed: the same credential with a usable key goes through.
    const imported = await h.submit('latchkey_import_user', {
      externalId: 'p',
      passkeys: [{ credentialId: 'cred-p', cosePublicKey: good, counter: 2 ** 32 - 1 }],
    })
    expect(imported.status).toBe(200)
    expect(
      (await h.query('list_suborgs', { organizationId: h.organizationId })).body.organizationIds,
    ).toHaveLength(1)
  })
})

describe("an import's webhook events", () => {
  it('an imported account is a LATCHKEY_SIGN_UP and each of its wallets a LATCHKEY_WALLET_CREATED; a skipped line makes none', async () => {
    const h = await createHarness()
    resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', {
        url: 'https://hooks.example.com/x',
        name: 'app',
        subscriptions: [{ eventType: 'LATCHKEY_SIGN_UP' }, { eventType: 'LATCHKEY_WALLET_CREATED' }],
      }),
    )
    const key = await importKey(h)
    const line = (walletName: string) => ({
      externalId: 'moved',
      email: 'moved@example.com',
      wallets: ['Main', 'Savings'].map((name) => ({
        walletName: `${walletName} ${name}`,
        encryptedBundle: encrypt(generateMnemonic(english), key),
        accounts: [ETHEREUM_ACCOUNT],
      })),
    })
    const imported = resultOf('latchkey_import_user', await h.submit('latchkey_import_user', line('first')))
    h.clock.advance(1)
    expect(
      resultOf('latchkey_import_user', await h.submit('latchkey_import_user', line('again'))).skipped,
    ).toBe(true)
    const deliveries = (await h.query('latchkey_list_webhook_deliveries', {})).body.webhookDeliveries as {
      eventType: string
      body: string
    }[]
    const data = (type: string) =>
      deliveries.filter((row) => row.eventType === type).map((row) => JSON.parse(row.body).data)
    expect(data('LATCHKEY_SIGN_UP')).toEqual([
      {
        subOrganizationId: imported.subOrganizationId,
        rootUserIds: [imported.userId],
        walletId: imported.walletIds[0],
      },
    ])
    const wallets = await h.service.store.findBy(
      'walletAccounts',
      'organizationId',
      imported.subOrganizationId,
    )
    expect(
      data('LATCHKEY_WALLET_CREATED').sort(
        (x, y) => imported.walletIds.indexOf(x.walletId) - imported.walletIds.indexOf(y.walletId),
      ),
    ).toEqual(
      imported.walletIds.map((walletId: string) => ({
        walletId,
        addresses: wallets.filter((row) => row.walletId === walletId).map((row) => row.address),
      })),
    )
  })
})

describe('pregeneration by create_sub_organization', () => {
  const pregenerate = (h: Harness, email: string) =>
    h.submit('create_sub_organization', {
      subOrganizationName: `pregenerated for ${email}`,
      rootUsers: [{ userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
      wallet: { walletName: 'Airdrop', accounts: [ETHEREUM_ACCOUNT] },
    })

  it('two devices racing the first sign-in land in the one pregenerated account; nothing else is made', async () => {
    const h = await createHarness()
    const made = resultOf('create_sub_organization', await pregenerate(h, 'drop@example.com'))
    const [a, b] = await Promise.all([otpLogin(h, 'drop@example.com'), otpLogin(h, 'drop@example.com')])
    for (const login of [a, b]) {
      expect(login.status).toBe(200)
      const wallets = await h.query(
        'list_wallets',
        { organizationId: made.subOrganizationId },
        { as: login.key, organizationId: made.subOrganizationId },
      )
      expect(wallets.body.wallets.map((w: Json) => w.walletId)).toEqual([made.wallet.walletId])
    }
    const subs = await h.query('list_suborgs', { organizationId: h.organizationId })
    expect(subs.body.organizationIds).toEqual([made.subOrganizationId])
  })

  it('the same contact pregenerated twice is refused; a sign-up for a pregenerated contact is told to log in', async () => {
    const h = await createHarness()
    expect((await pregenerate(h, 'twice@example.com')).status).toBe(200)
    expect(errorOf(await pregenerate(h, 'Twice@example.com'))).toMatchObject({
      status: 409,
      field: 'parameters.rootUsers[0].userEmail',
    })
    const key = testKey()
    const init = await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: 'twice@example.com' })
    const outbox = await h.service.app.request('/dev/outbox.json?contact=twice%40example.com')
    const [message] = ((await outbox.json()) as { messages: { code: string }[] }).messages
    const verify = await proxy(h, 'otp_verify', {
      otpId: init.body.otpId,
      otpCode: message!.code,
      public_key: key.publicKey,
    })
    const token = verify.body.verificationToken as string
    const signup = await proxy(h, 'signup', {
      userEmail: 'twice@example.com',
      verificationToken: token,
      clientSignature: bytesToHex(
        p256.sign(utf8ToBytes(token), key.privateKey, { prehash: true, format: 'compact' }),
      ),
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    })
    expect(signup.status).toBe(409)
    expect(signup.body.message).toMatch(/log in/)
  })

  it('an import of a contact a pregenerated account holds is refused naming it; an unverified copy does not block', async () => {
    const h = await createHarness()
    expect((await pregenerate(h, 'held@example.com')).status).toBe(200)
    expect(
      errorOf(await h.submit('latchkey_import_user', { externalId: 'held', email: 'Held@example.com' })),
    ).toMatchObject({ status: 409, field: 'parameters.email' })
    // Someone's own unproven copy of an address holds nothing: the import goes through.
    const other = await h.createSubOrganization()
    const users = await h.query(
      'list_users',
      { organizationId: other.organizationId },
      { as: other.keys[0], organizationId: other.organizationId },
    )
    const set = await h.submit(
      'update_user_email',
      { userId: users.body.users[0].userId, userEmail: 'free@example.com' },
      { as: other.keys[0], organizationId: other.organizationId },
    )
    expect(set.status).toBe(200)
    expect(
      (await h.submit('latchkey_import_user', { externalId: 'free', email: 'free@example.com' })).status,
    ).toBe(200)
  })

  it("an attacker's unverified copy of the contact never routes the owner's login", async () => {
    const h = await createHarness()
    const made = resultOf('create_sub_organization', await pregenerate(h, 'owner@example.com'))
    // The attacker's own account (made by the operator for another address) sets the owner's
    // address without proof: stored unverified.
    const attacker = await h.createSubOrganization()
    const users = await h.query(
      'list_users',
      { organizationId: attacker.organizationId },
      {
        as: attacker.keys[0],
        organizationId: attacker.organizationId,
      },
    )
    const set = await h.submit(
      'update_user_email',
      { userId: users.body.users[0].userId, userEmail: 'owner@example.com' },
      { as: attacker.keys[0], organizationId: attacker.organizationId },
    )
    expect(set.status).toBe(200)
    for (let i = 0; i < 2; i++) {
      h.clock.advance(61_000)
      const login = await otpLogin(h, 'owner@example.com')
      expect(login.status).toBe(200)
      expect(login.body.organizationId ?? decodeJwtClaims(login.body.session).organization_id).toBe(
        made.subOrganizationId,
      )
    }
  })
})

describe('claims follow what an account holds', () => {
  const GOOGLE = 'https://accounts.google.com'
  const V8 = { type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8' }

  /** An account the operator pregenerates with a vouched e-mail and OAuth identity, and its own root key. */
  async function account(h: Harness, email: string, subject: string) {
    const key = testKey()
    const reply = await h.submit(
      'create_sub_organization',
      {
        subOrganizationName: email,
        rootUsers: [
          {
            userName: email,
            userEmail: email,
            apiKeys: [key.apiKey('root')],
            authenticators: [],
            oauthProviders: [
              { providerName: 'google', oidcClaims: { iss: GOOGLE, sub: subject, aud: 'app' } },
            ],
          },
        ],
        rootQuorumThreshold: 1,
      },
      V8,
    )
    expect(reply.status).toBe(200)
    // V8's result is under its own key.
    const made = Object.values(reply.body.activity.result as Record<string, Json>)[0]!
    return { id: made.subOrganizationId as string, userId: made.rootUserIds[0] as string, key }
  }
  const claimsOf = async (h: Harness, subOrganizationId: string) =>
    (await h.service.store.all('importClaims')).filter((row) => row.subOrganizationId === subOrganizationId)

  it('a deleted account gives up its e-mail and identity: an import of them goes through', async () => {
    const h = await createHarness()
    const gone = await account(h, 'gone@example.com', 'gone-sub')
    const line = {
      externalId: 'g1',
      email: 'gone@example.com',
      oauthProviders: [{ issuer: GOOGLE, subject: 'gone-sub' }],
    }
    expect(errorOf(await h.submit('latchkey_import_user', line))).toMatchObject({
      status: 409,
      field: 'parameters.email',
    })
    expect(await claimsOf(h, gone.id)).toHaveLength(2)
    const deleted = await h.submit('delete_sub_organization', {}, { as: gone.key, organizationId: gone.id })
    expect(deleted.status).toBe(200)
    expect(await claimsOf(h, gone.id)).toEqual([])
    h.clock.advance(1000)
    const imported = resultOf('latchkey_import_user', await h.submit('latchkey_import_user', line))
    expect((await claimsOf(h, imported.subOrganizationId)).map((row) => row.kind).sort()).toEqual([
      'email',
      'oauth',
    ])
  })

  it('changing the e-mail or unlinking the identity releases its claim; nobody else can release it', async () => {
    const h = await createHarness()
    const held = await account(h, 'old@example.com', 'old-sub')
    // Another account sets the address (unproven) and removes it again: the holder's claim stays.
    const other = await h.createSubOrganization()
    const otherUser = other.userIds[0]!
    for (const userEmail of ['old@example.com', ''])
      expect(
        (
          await h.submit(
            'update_user_email',
            { userId: otherUser, userEmail },
            { as: other.keys[0], organizationId: other.organizationId },
          )
        ).status,
      ).toBe(200)
    expect(
      errorOf(await h.submit('latchkey_import_user', { externalId: 'c1', email: 'old@example.com' })),
    ).toMatchObject({ status: 409, field: 'parameters.email' })

    const changed = await h.submit(
      'update_user_email',
      { userId: held.userId, userEmail: 'new@example.com' },
      { as: held.key, organizationId: held.id },
    )
    expect(changed.status).toBe(200)
    h.clock.advance(1000)
    expect(
      (await h.submit('latchkey_import_user', { externalId: 'c1', email: 'old@example.com' })).status,
    ).toBe(200)
    const identity = { externalId: 'c2', oauthProviders: [{ issuer: GOOGLE, subject: 'old-sub' }] }
    expect(errorOf(await h.submit('latchkey_import_user', identity))).toMatchObject({
      status: 409,
      field: 'parameters.oauthProviders[0]',
    })
    const providers = await h.service.store.findBy('oauthProviders', 'organizationId', held.id)
    const unlinked = await h.submit(
      'delete_oauth_providers',
      { userId: held.userId, providerIds: providers.map((row) => row.id) },
      { as: held.key, organizationId: held.id },
    )
    expect(unlinked.status).toBe(200)
    h.clock.advance(1000)
    expect((await h.submit('latchkey_import_user', identity)).status).toBe(200)
    expect(await claimsOf(h, held.id)).toEqual([])
  })

  it("deleting a user gives up the identity it linked; removing an imported passkey gives up the passkey's claim", async () => {
    const h = await createHarness()
    const { oidc } = signInState(h.service.runtime)
    const sub = await h.createSubOrganization()
    const token = oidc.issue({
      sub: 'member-sub',
      aud: 'app',
      nonce: 'n',
      provider: 'OAUTH2_PROVIDER_GOOGLE',
      idp_iss: 'https://accounts.google.com',
      org: h.organizationId,
    }).token
    const created = await h.submit(
      'create_users',
      {
        users: [
          {
            userName: 'member',
            apiKeys: [],
            authenticators: [],
            oauthProviders: [{ providerName: 'google', oidcToken: token }],
            userTags: [],
          },
        ],
      },
      { as: sub.keys[0], organizationId: sub.organizationId, type: 'ACTIVITY_TYPE_CREATE_USERS_V3' },
    )
    expect(created.status).toBe(200)
    // The link recorded the provider's issuer (the token's idp_iss), which an import names.
    const identity = {
      externalId: 'm1',
      oauthProviders: [{ issuer: 'accounts.google.com', subject: 'member-sub' }],
    }
    expect(errorOf(await h.submit('latchkey_import_user', identity))).toMatchObject({
      status: 409,
      field: 'parameters.oauthProviders[0]',
    })
    const deleted = await h.submit(
      'delete_users',
      { userIds: resultOf('create_users', created).userIds },
      { as: sub.keys[0], organizationId: sub.organizationId },
    )
    expect(deleted.status).toBe(200)
    h.clock.advance(1000)
    expect((await h.submit('latchkey_import_user', identity)).status).toBe(200)

    // A passkey comes only with an import; its account's session removes it.
    const credential = { credentialId: 'cred-1', cosePublicKey: coseKeyOf(p256.utils.randomSecretKey()) }
    const withPasskey = resultOf(
      'latchkey_import_user',
      await h.submit('latchkey_import_user', {
        externalId: 'pk1',
        email: 'pk@example.com',
        passkeys: [credential],
      }),
    )
    const login = await otpLogin(h, 'pk@example.com')
    const [passkey] = await h.service.store.findBy(
      'authenticators',
      'organizationId',
      withPasskey.subOrganizationId,
    )
    const removed = await h.submit(
      'delete_authenticators',
      { userId: withPasskey.userId, authenticatorIds: [passkey!.id] },
      { as: login.key, organizationId: withPasskey.subOrganizationId },
    )
    expect(removed.status).toBe(200)
    expect(
      (await h.submit('latchkey_import_user', { externalId: 'pk2', passkeys: [credential] })).status,
    ).toBe(200)
  })

  it('a sign-up by verification token claims its proven e-mail', async () => {
    const h = await createHarness()
    const key = testKey()
    const email = 'signed@example.com'
    const init = await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
    const outbox = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(email)}`)
    const [message] = ((await outbox.json()) as { messages: { code: string }[] }).messages
    const verify = await proxy(h, 'otp_verify', {
      otpId: init.body.otpId,
      otpCode: message!.code,
      public_key: key.publicKey,
    })
    const token = verify.body.verificationToken as string
    const signup = await proxy(h, 'signup', {
      userEmail: email,
      verificationToken: token,
      clientSignature: bytesToHex(
        p256.sign(utf8ToBytes(token), key.privateKey, { prehash: true, format: 'compact' }),
      ),
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    })
    expect(signup.status).toBe(200)
    const claim = await h.service.store.get('importClaims', accountClaimId(h.organizationId, 'email', email))
    expect(claim).toMatchObject({ kind: 'email', subOrganizationId: signup.body.organizationId })
    expect(errorOf(await h.submit('latchkey_import_user', { externalId: 's1', email }))).toMatchObject({
      status: 409,
      field: 'parameters.email',
    })
  })
})

describe('an OAuth identity is its provider and subject, whichever path records it', () => {
  const GOOGLE = 'https://accounts.google.com'
  /** A token as `oauth2_authenticate` issues it after Google's sign-in (its iss is the service's). */
  const googleToken = (h: Harness, sub: string, key = testKey(), idpIssuer = GOOGLE) =>
    signInState(h.service.runtime).oidc.issue({
      sub,
      aud: 'client-web',
      nonce: oidcNonce(key.publicKey),
      provider: 'OAUTH2_PROVIDER_GOOGLE',
      idp_iss: idpIssuer,
      org: h.organizationId,
    }).token
  const providersOf = async (h: Harness, subject: string) =>
    (await h.service.store.findBy('oauthProviders', 'subject', subject)).map((row) => ({
      organizationId: row.organizationId,
      issuer: row.issuer,
    }))

  it("an imported Google user's OAuth sign-in lands in the imported account; a sign-up or a link of it elsewhere is refused", async () => {
    const h = await createHarness()
    // Google's other spelling of its issuer, as some exports carry it.
    const made = resultOf(
      'latchkey_import_user',
      await h.submit('latchkey_import_user', {
        externalId: 'g-1',
        oauthProviders: [{ issuer: 'accounts.google.com', subject: 'g-sub-1', providerName: 'google' }],
      }),
    )
    expect(await providersOf(h, 'g-sub-1')).toEqual([
      { organizationId: made.subOrganizationId, issuer: GOOGLE },
    ])
    const key = testKey()
    const token = googleToken(h, 'g-sub-1', key)
    expect((await proxy(h, 'account', { filterType: 'OIDC_TOKEN', filterValue: token })).body).toEqual({
      organizationId: made.subOrganizationId,
    })
    const login = await proxy(h, 'oauth_login', { oidcToken: token, publicKey: key.publicKey })
    expect(login.status, JSON.stringify(login.body)).toBe(200)
    expect(decodeJwtClaims<{ organization_id: string }>(login.body.session).organization_id).toBe(
      made.subOrganizationId,
    )
    // The same person signing up through the proxy, with a token whose idp_iss is the other spelling.
    expect(
      errorOf(
        await proxy(h, 'signup', {
          oauthProviders: [
            {
              providerName: 'google',
              oidcToken: googleToken(h, 'g-sub-1', testKey(), 'accounts.google.com'),
            },
          ],
        }),
      ),
    ).toMatchObject({ status: 409, errorCode: 'ALREADY_EXISTS' })
    // Or linked to another account by create_oauth_providers.
    const other = await h.createSubOrganization()
    expect(
      errorOf(
        await h.submit(
          'create_oauth_providers',
          {
            userId: other.userIds[0],
            oauthProviders: [{ providerName: 'google', oidcToken: googleToken(h, 'g-sub-1') }],
          },
          { as: other.keys[0], organizationId: other.organizationId },
        ),
      ),
    ).toEqual({ status: 409, errorCode: 'ALREADY_EXISTS', field: 'parameters.oauthProviders[0].oidcToken' })
    expect(await providersOf(h, 'g-sub-1')).toHaveLength(1)
  })

  it('the reverse: an OAuth sign-up or link first, then an import of that Google identity is refused naming it', async () => {
    const h = await createHarness()
    const signedUp = await proxy(h, 'signup', {
      oauthProviders: [
        { providerName: 'google', oidcToken: googleToken(h, 'g-sub-2', testKey(), 'accounts.google.com') },
      ],
    })
    expect(signedUp.status, JSON.stringify(signedUp.body)).toBe(200)
    // Recorded as the provider's issuer in its canonical spelling, never as the service's.
    expect(await providersOf(h, 'g-sub-2')).toEqual([
      { organizationId: signedUp.body.organizationId, issuer: GOOGLE },
    ])
    const linked = await h.createSubOrganization()
    h.clock.advance(1000)
    expect(
      (
        await h.submit(
          'create_oauth_providers',
          {
            userId: linked.userIds[0],
            oauthProviders: [{ providerName: 'google', oidcToken: googleToken(h, 'g-sub-3') }],
          },
          { as: linked.keys[0], organizationId: linked.organizationId },
        )
      ).status,
    ).toBe(200)
    for (const [subject, issuer] of [
      ['g-sub-2', GOOGLE],
      ['g-sub-3', 'accounts.google.com'],
    ] as const)
      expect(
        errorOf(
          await h.submit('latchkey_import_user', {
            externalId: `after-${subject}`,
            oauthProviders: [{ issuer, subject }],
          }),
        ),
      ).toEqual({ status: 409, errorCode: 'ALREADY_EXISTS', field: 'parameters.oauthProviders[0]' })
    // Another provider's identity with the same subject is another person.
    expect(
      (
        await h.submit('latchkey_import_user', {
          externalId: 'apple-same-subject',
          oauthProviders: [{ issuer: 'https://appleid.apple.com', subject: 'g-sub-2' }],
        })
      ).status,
    ).toBe(200)
  })

  it("an import or a pregeneration naming the service's own token issuer is refused naming the field", async () => {
    const h = await createHarness()
    expect(
      errorOf(
        await h.submit('latchkey_import_user', {
          externalId: 'own-issuer',
          oauthProviders: [{ issuer: signInState(h.service.runtime).oidc.issuer, subject: 's' }],
        }),
      ),
    ).toMatchObject({ status: 400, field: 'parameters.oauthProviders[0].issuer' })
    const pregenerated = await h.submit(
      'create_sub_organization',
      {
        subOrganizationName: 'p',
        rootUsers: [
          {
            userName: 'p',
            apiKeys: [],
            authenticators: [],
            oauthProviders: [
              {
                providerName: 'google',
                oidcClaims: { iss: signInState(h.service.runtime).oidc.issuer, sub: 's', aud: 'a' },
              },
            ],
          },
        ],
        rootQuorumThreshold: 1,
      },
      { type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8' },
    )
    expect(errorOf(pregenerated)).toMatchObject({
      status: 400,
      field: 'parameters.rootUsers[0].oauthProviders[0].oidcClaims.iss',
    })
  })

  it('an identity linked before issuers were recorded by provider (the service issuer) still logs in and is still claimed', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const { oidc } = signInState(h.service.runtime)
    // As a link wrote it until now: the service's own issuer.
    await h.service.store.transaction(async (tx) => {
      await tx.put('oauthProviders', {
        id: 'legacy-link',
        organizationId: sub.organizationId,
        userId: sub.userIds[0]!,
        providerName: 'google',
        issuer: oidc.issuer,
        audience: 'client-web',
        subject: 'legacy-sub',
        createdAt: 0,
        updatedAt: 0,
      })
    })
    const key = testKey()
    const login = await proxy(h, 'oauth_login', {
      oidcToken: googleToken(h, 'legacy-sub', key),
      publicKey: key.publicKey,
    })
    expect(login.status, JSON.stringify(login.body)).toBe(200)
    expect(decodeJwtClaims<{ organization_id: string }>(login.body.session).organization_id).toBe(
      sub.organizationId,
    )
    expect(
      errorOf(
        await h.submit('latchkey_import_user', {
          externalId: 'legacy',
          oauthProviders: [{ issuer: GOOGLE, subject: 'legacy-sub' }],
        }),
      ),
    ).toMatchObject({ status: 409, field: 'parameters.oauthProviders[0]' })
  })
})

describe('latchkey_get_imported_users', () => {
  it('lists the external ids imported into accounts that exist; a deleted one is imported again', async () => {
    const h = await createHarness()
    const ask = (externalIds: unknown) =>
      h.query('latchkey_get_imported_users', { organizationId: h.organizationId, externalIds })
    const first = resultOf(
      'latchkey_import_user',
      await h.submit('latchkey_import_user', { externalId: 'again', email: 'again@example.com' }),
    )
    const listed = await ask(['again', 'never', 'again'])
    expect(listed.status).toBe(200)
    expect(listed.body.importedUsers).toEqual([
      {
        externalId: 'again',
        subOrganizationId: first.subOrganizationId,
        userId: first.userId,
        walletIds: [],
        privateKeyIds: [],
      },
    ])
    const login = await otpLogin(h, 'again@example.com')
    const deleted = await h.submit(
      'delete_sub_organization',
      {},
      { as: login.key, organizationId: first.subOrganizationId },
    )
    expect(deleted.status).toBe(200)
    expect((await ask(['again'])).body.importedUsers).toEqual([])
    h.clock.advance(61_000)
    const second = resultOf(
      'latchkey_import_user',
      await h.submit('latchkey_import_user', { externalId: 'again', email: 'again@example.com' }),
    )
    expect(second.skipped).toBe(false)
    expect(second.subOrganizationId).not.toBe(first.subOrganizationId)
    const relogin = await otpLogin(h, 'again@example.com')
    expect(relogin.body.organizationId ?? decodeJwtClaims(relogin.body.session).organization_id).toBe(
      second.subOrganizationId,
    )
    h.clock.advance(1000)
    expect(
      resultOf(
        'latchkey_import_user',
        await h.submit('latchkey_import_user', { externalId: 'again', email: 'again@example.com' }),
      ).skipped,
    ).toBe(true)
  })

  it('names a bad field, and answers root users of the top-level organization only', async () => {
    const h = await createHarness()
    const ask = (body: Record<string, unknown>, options = {}) =>
      h.query('latchkey_get_imported_users', { organizationId: h.organizationId, ...body }, options)
    for (const [externalIds, reason] of [
      [undefined, /required/],
      [[], /at least 1/],
      [Array.from({ length: 101 }, (_, i) => `x${i}`), /at most 100/],
      [[''], /non-empty/],
      [['x'.repeat(257)], /at most 256/],
    ] as const) {
      const reply = await ask(externalIds === undefined ? {} : { externalIds })
      expect(reply.status).toBe(400)
      expect(reply.body.details?.field).toMatch(/externalIds/)
      expect(reply.body.message).toMatch(reason)
    }
    const sub = await h.createSubOrganization()
    const refused = await h.query(
      'latchkey_get_imported_users',
      { organizationId: sub.organizationId, externalIds: ['x'] },
      { as: sub.keys[0], organizationId: sub.organizationId },
    )
    expect(refused.status).toBe(403)
  })
})
