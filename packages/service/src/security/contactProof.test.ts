// A verification token bound to a key is redeemed only by that key, and a contact set without
// proof is unverified: no code is sent to it, no login or sign-up lookup finds it. Each test
// here failed on the service before the fix.

import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness, type Json, resultOf, testKey } from '../testing/harness.ts'

const APP = 'http://app.test'

async function call(h: Harness, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: APP,
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

const errorCodeOf = (reply: { body: Json }) => reply.body?.details?.errorCode

/** A P-256 key pair held by a client, signing text as the published clients do (SHA-256, r‖s). */
function clientKey() {
  const privateKey = p256.utils.randomSecretKey()
  return {
    publicKey: bytesToHex(p256.getPublicKey(privateKey, true)),
    sign: (text: string) =>
      bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format: 'compact' })),
  }
}

async function outbox(h: Harness, contact: string) {
  const res = await h.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(contact)}`)
  return ((await res.json()) as { messages: { code: string; otpId: string }[] }).messages
}

/** The proxy's OTP step; the token is bound to `publicKey`. */
async function proxyToken(h: Harness, email: string, publicKey: string): Promise<string> {
  const init = await call(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  expect(init.status).toBe(200)
  const [message] = await outbox(h, email)
  const verify = await call(h, 'otp_verify', {
    otpId: init.body.otpId,
    otpCode: message!.code,
    public_key: publicKey,
  })
  expect(verify.status).toBe(200)
  h.clock.advance(1000)
  return verify.body.verificationToken as string
}

const userOf = async (h: Harness, organizationId: string) =>
  (await h.service.store.findBy('users', 'organizationId', organizationId))[0]!

describe('a verification token bound to a key is redeemed only by that key', () => {
  it("an intercepted token attaches nothing to the attacker's account; its owner still signs up with it", async () => {
    const h = await createHarness()
    const email = 'victim@example.com'
    const victim = clientKey()
    const token = await proxyToken(h, email, victim.publicKey)
    const attacker = await h.createSubOrganization()
    const attackerAs = { as: attacker.keys[0]!, organizationId: attacker.organizationId }
    const update = await h.submit(
      'update_user_email',
      { userId: attacker.userIds[0]!, userEmail: email, verificationToken: token },
      attackerAs,
    )
    // The activity completes, as one without a token does, but proves nothing.
    expect(update.status).toBe(200)
    expect(await userOf(h, attacker.organizationId)).toMatchObject({
      userEmail: email,
      userEmailUnverified: true,
    })
    // The attacker's account is not found by the address, and no code goes there from it.
    const lookup = await call(h, 'account', { filterType: 'EMAIL', filterValue: email })
    expect(lookup.body.organizationId ?? undefined).toBeUndefined()
    h.clock.advance(1000)
    const sent = await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact: email }, attackerAs)
    expect(sent.status).toBe(403)
    // The token was not spent and the address is not taken: its owner signs up with it.
    const signup = await call(h, 'signup', {
      userEmail: email,
      verificationToken: token,
      clientSignature: victim.sign(token),
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    })
    expect(signup.status).toBe(200)
    expect(await userOf(h, signup.body.organizationId)).not.toHaveProperty('userEmailUnverified')
    const found = await call(h, 'account', { filterType: 'EMAIL', filterValue: email })
    expect(found.body.organizationId).toBe(signup.body.organizationId)
  })

  it('a contact update is verified when the bound key stamps it or signs the token', async () => {
    const h = await createHarness()
    const sessionKey = testKey()
    const account = await h.createSubOrganization({ keys: [sessionKey] })
    const as = { as: sessionKey, organizationId: account.organizationId }
    const userId = account.userIds[0]!
    // Bound to the key that stamps the update.
    const own = await proxyToken(h, 'own@example.com', sessionKey.publicKey)
    resultOf(
      'update_user_email',
      await h.submit(
        'update_user_email',
        { userId, userEmail: 'own@example.com', verificationToken: own },
        as,
      ),
    )
    expect(await userOf(h, account.organizationId)).not.toHaveProperty('userEmailUnverified')
    // Bound to another key the client holds, which signs the token.
    const other = clientKey()
    const signed = await proxyToken(h, 'signed@example.com', other.publicKey)
    const wrong = await h.submit(
      'update_user_email',
      {
        userId,
        userEmail: 'signed@example.com',
        verificationToken: signed,
        clientSignature: clientKey().sign(signed),
      },
      as,
    )
    expect(errorCodeOf(wrong)).toBe('CLIENT_SIGNATURE_INVALID')
    h.clock.advance(1000)
    resultOf(
      'update_user_email',
      await h.submit(
        'update_user_email',
        {
          userId,
          userEmail: 'signed@example.com',
          verificationToken: signed,
          clientSignature: other.sign(signed),
        },
        as,
      ),
    )
    expect(await userOf(h, account.organizationId)).toMatchObject({ userEmail: 'signed@example.com' })
    expect(await userOf(h, account.organizationId)).not.toHaveProperty('userEmailUnverified')
  })

  it("create_sub_organization with a bound token needs the key's stamp or its clientSignature", async () => {
    const h = await createHarness()
    const email = 'direct@example.com'
    const key = clientKey()
    const token = await proxyToken(h, email, key.publicKey)
    const body = (extra: Record<string, unknown>) => ({
      subOrganizationName: 'Direct',
      rootUsers: [
        { userName: 'direct', userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] },
      ],
      rootQuorumThreshold: 1,
      verificationToken: token,
      ...extra,
    })
    const refused = await h.submit('create_sub_organization', body({}))
    expect(errorCodeOf(refused)).toBe('CLIENT_SIGNATURE_INVALID')
    expect(refused.body.details?.field).toBe('parameters.clientSignature')
    h.clock.advance(1000)
    const created = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', body({ clientSignature: key.sign(token) })),
    )
    expect(await userOf(h, created.subOrganizationId as string)).toMatchObject({ userEmail: email })
  })
})

describe('contacts set without proof are unverified', () => {
  it("a sub-organization's create_users with a stranger's e-mail does not let it send codes there", async () => {
    const h = await createHarness()
    const stranger = 'stranger@example.com'
    const attacker = await h.createSubOrganization()
    const as = { as: attacker.keys[0]!, organizationId: attacker.organizationId }
    const created = resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [
            { userName: 'planted', userEmail: stranger, apiKeys: [], authenticators: [], oauthProviders: [] },
          ],
        },
        as,
      ),
    )
    const planted = await h.service.store.get('users', (created.userIds as string[])[0]!)
    expect(planted).toMatchObject({ userEmail: stranger, userEmailUnverified: true })
    h.clock.advance(1000)
    const sent = await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact: stranger }, as)
    expect(sent.status).toBe(403)
    expect(errorCodeOf(sent)).toBe('PERMISSION_DENIED')
    expect(sent.body.message).toMatch(/not verified/)
    expect(await outbox(h, stranger)).toEqual([])
    // The same for a phone number set by update without a token.
    h.clock.advance(1000)
    const phone = '+14155550199'
    resultOf(
      'update_user_phone_number',
      await h.submit(
        'update_user_phone_number',
        { userId: attacker.userIds[0]!, userPhoneNumber: phone },
        as,
      ),
    )
    h.clock.advance(1000)
    const sms = await h.submit('init_otp', { otpType: 'OTP_TYPE_SMS', contact: phone }, as)
    expect(errorCodeOf(sms)).toBe('PERMISSION_DENIED')
  })

  it("an unverified contact is no way back in: the only root user's last key stays", async () => {
    const h = await createHarness()
    const account = await h.createSubOrganization()
    const as = { as: account.keys[0]!, organizationId: account.organizationId }
    const userId = account.userIds[0]!
    resultOf(
      'update_user_email',
      await h.submit('update_user_email', { userId, userEmail: 'mine@example.com' }, as),
    )
    h.clock.advance(1000)
    const keys = await h.service.store.findBy('apiKeys', 'userId', userId)
    const refused = await h.submit('delete_api_keys', { userId, apiKeyIds: keys.map((key) => key.id) }, as)
    expect(errorCodeOf(refused)).toBe('FIELD_INVALID')
    expect(refused.body.message).toMatch(/without any credential/)
  })

  it("contacts the parent organization's root sets are vouched for: codes go there", async () => {
    const h = await createHarness()
    const key = testKey()
    const email = 'vouched@example.com'
    const created = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'Operator-made',
        rootUsers: [
          {
            userName: 'v',
            userEmail: email,
            apiKeys: [key.apiKey('k')],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      }),
    )
    const organizationId = created.subOrganizationId as string
    expect(await userOf(h, organizationId)).not.toHaveProperty('userEmailUnverified')
    const sent = await h.submit(
      'init_otp',
      { otpType: 'OTP_TYPE_EMAIL', contact: email },
      { as: key, organizationId },
    )
    expect(sent.status).toBe(200)
    expect(await outbox(h, email)).toHaveLength(1)
  })
})
