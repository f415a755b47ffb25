import { base64urlnopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { signInState } from '../signin/signInState.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Reply,
  resultOf,
  softPasskey,
  testKey,
} from '../testing/harness.ts'
import { latestCode } from '../testing/latestCode.ts'

const errorOf = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})

/** An OIDC token as `oauth2_authenticate` issues it (the exchange itself is tested in signin/oauth). */
async function oidcToken(h: Harness, sub: string, aud = 'client-web') {
  return signInState(h.service.runtime).oidc.issue({
    sub,
    aud,
    nonce: 'n'.repeat(64),
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    idp_iss: 'https://accounts.google.com',
    org: h.organizationId,
    email: `${sub}@example.com`,
  }).token
}

/** A verification token for `contact`, minted in the parent organization (as the auth proxy does). */
async function verificationToken(
  h: Harness,
  contact: string,
  otpType = 'OTP_TYPE_EMAIL',
  /** The key the token is bound to, as the published clients' `verifyOtp` sends a fresh one. */
  publicKey?: string,
) {
  const init = await h.submit('init_otp', { otpType, contact })
  const otpId = resultOf('init_otp', init).otpId
  h.clock.advance(1000)
  const verify = await h.submit('verify_otp', {
    otpId,
    otpCode: await latestCode(h.service, contact),
    ...(publicKey !== undefined ? { publicKey } : {}),
  })
  h.clock.advance(1000)
  return resultOf('verify_otp', verify).verificationToken as string
}

async function account(h: Harness) {
  const sub = await h.createSubOrganization()
  const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
  return { ...sub, as, userId: sub.userIds[0]! }
}

const providersOf = async (h: Harness, a: Awaited<ReturnType<typeof account>>) => {
  const reply = await h.query(
    'get_user',
    { organizationId: a.organizationId, userId: a.userId },
    { as: a.as.as },
  )
  return reply.body.user.oauthProviders as {
    providerId: string
    issuer: string
    subject: string
    audience: string
  }[]
}

describe('create_oauth_providers / delete_oauth_providers', () => {
  it('links a verified identity (V2 type and result), adds an audience of it, lists and unlinks it', async () => {
    const h = await createHarness()
    const a = await account(h)
    const reply = await h.submit(
      'create_oauth_providers',
      {
        userId: a.userId,
        oauthProviders: [
          { providerName: 'google', oidcToken: await oidcToken(h, 'grace') },
          {
            providerName: 'google',
            oidcClaims: { iss: 'https://latchkey.invalid/oidc', sub: 'grace', aud: 'client-ios' },
          },
        ],
      },
      a.as,
    )
    expect(reply.status).toBe(200)
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2')
    const { providerIds } = reply.body.activity.result.createOauthProvidersResultV2
    expect(providerIds).toHaveLength(2)
    const listed = await providersOf(h, a)
    expect(listed.map((p) => [p.subject, p.audience]).sort()).toEqual([
      ['grace', 'client-ios'],
      ['grace', 'client-web'],
    ])

    h.clock.advance(1000)
    const removed = await h.submit('delete_oauth_providers', { userId: a.userId, providerIds }, a.as)
    expect(resultOf('delete_oauth_providers', removed)).toEqual({ providerIds })
    expect(await providersOf(h, a)).toEqual([])
    // Unlinked, the identity can be linked again (here or elsewhere).
    h.clock.advance(1000)
    const again = await h.submit(
      'create_oauth_providers',
      {
        userId: a.userId,
        oauthProviders: [{ providerName: 'google', oidcToken: await oidcToken(h, 'grace') }],
      },
      a.as,
    )
    expect(again.status).toBe(200)
  })

  it('one account per identity: another sub-organization cannot link it, nor replay the link', async () => {
    const h = await createHarness()
    const a = await account(h)
    const b = await account(h)
    const token = await oidcToken(h, 'ada')
    const link = (who: typeof a) =>
      h.submit(
        'create_oauth_providers',
        { userId: who.userId, oauthProviders: [{ providerName: 'google', oidcToken: token }] },
        who.as,
      )
    expect((await link(a)).status).toBe(200)
    h.clock.advance(1000)
    expect(errorOf(await link(a))).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
      field: 'parameters.oauthProviders[0].oidcToken',
    })
    expect(errorOf(await link(b))).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
      field: 'parameters.oauthProviders[0].oidcToken',
    })
    expect(await providersOf(h, b)).toEqual([])
  })

  it('refuses unproven claims, forged tokens, users and providers of another organization', async () => {
    const h = await createHarness()
    const a = await account(h)
    const b = await account(h)
    const claims = { iss: 'https://latchkey.invalid/oidc', sub: 'victim', aud: 'client-web' }
    expect(
      errorOf(
        await h.submit(
          'create_oauth_providers',
          { userId: a.userId, oauthProviders: [{ providerName: 'google', oidcClaims: claims }] },
          a.as,
        ),
      ),
    ).toEqual({
      status: 403,
      errorCode: 'PERMISSION_DENIED',
      field: 'parameters.oauthProviders[0].oidcClaims',
    })
    const token = await oidcToken(h, 'eve')
    const forged = `${token.slice(0, -4)}AAAA`
    expect(
      errorOf(
        await h.submit(
          'create_oauth_providers',
          { userId: a.userId, oauthProviders: [{ providerName: 'google', oidcToken: forged }] },
          a.as,
        ),
      ),
    ).toMatchObject({ errorCode: 'OIDC_TOKEN_INVALID', field: 'parameters.oauthProviders[0].oidcToken' })
    expect(
      errorOf(
        await h.submit(
          'create_oauth_providers',
          { userId: a.userId, oauthProviders: [{ providerName: 'google' }] },
          a.as,
        ),
      ),
    ).toEqual({ status: 400, errorCode: 'FIELD_REQUIRED', field: 'parameters.oauthProviders[0].oidcToken' })
    // A's root key acting on B's user, in A or in B.
    expect(
      errorOf(
        await h.submit(
          'create_oauth_providers',
          { userId: b.userId, oauthProviders: [{ providerName: 'google', oidcToken: token }] },
          a.as,
        ),
      ),
    ).toEqual({ status: 404, errorCode: 'USER_NOT_FOUND', field: 'parameters.userId' })
    const bLink = await h.submit(
      'create_oauth_providers',
      { userId: b.userId, oauthProviders: [{ providerName: 'google', oidcToken: token }] },
      b.as,
    )
    const [bProvider] = resultOf('create_oauth_providers', bLink).providerIds
    expect(
      errorOf(await h.submit('delete_oauth_providers', { userId: a.userId, providerIds: [bProvider] }, a.as)),
    ).toEqual({ status: 404, errorCode: 'OAUTH_PROVIDER_NOT_FOUND', field: 'parameters.providerIds[0]' })
    expect(
      (await h.submit('delete_oauth_providers', { userId: b.userId, providerIds: [bProvider] }, { ...a.as }))
        .status,
    ).toBe(404)
    expect(await providersOf(h, b)).toHaveLength(1)
  })
})

describe('create_authenticators: one account per passkey', () => {
  const register = (h: Harness, a: Awaited<ReturnType<typeof account>>, passkey = softPasskey()) => {
    h.clock.advance(1)
    return h.submit('create_authenticators', { userId: a.userId, authenticators: [passkey.register()] }, a.as)
  }
  /** A passkey whose authenticator copied `of`'s credential id (with a key of its own). */
  const copyOf = (of: { credentialId: string }) =>
    softPasskey({ credentialId: base64urlnopad.decode(of.credentialId) })
  const FIELD = 'parameters.authenticators[0].attestation.credentialId'

  it("another account of the parent cannot register a passkey's credential id, imported or registered, nor both at once", async () => {
    const h = await createHarness()
    const [victim, attacker, other] = [await account(h), await account(h), await account(h)]
    const passkey = softPasskey()
    resultOf('create_authenticators', await register(h, victim, passkey))
    expect(errorOf(await register(h, attacker, copyOf(passkey)))).toMatchObject({ status: 409, field: FIELD })
    // An imported passkey: its claim holds it the same way.
    const imported = softPasskey()
    resultOf(
      'latchkey_import_user',
      await h.submit('latchkey_import_user', {
        externalId: 'moved',
        passkeys: [{ credentialId: imported.credentialId, cosePublicKey: imported.cosePublicKey }],
      }),
    )
    expect(errorOf(await register(h, attacker, copyOf(imported)))).toMatchObject({
      status: 409,
      field: FIELD,
    })
    // Two accounts racing for one new id: one holds it.
    const fresh = softPasskey()
    const raced = await Promise.all([register(h, attacker, fresh), register(h, other, copyOf(fresh))])
    expect(raced.map((reply) => reply.status).sort()).toEqual([200, 409])
    // Held by the victim's account alone (read from the store: `list_suborgs` names an account a
    // user registered a passkey in only once the passkey signed a request naming it).
    const holders = await h.service.store.findBy('authenticators', 'credentialId', passkey.credentialId)
    expect(holders.map((row) => row.organizationId)).toEqual([victim.organizationId])
  })

  it('the id is free again once its account removed the passkey', async () => {
    const h = await createHarness()
    const [first, second] = [await account(h), await account(h)]
    // Another way in first: the passkey is not the account's last.
    const passkey = softPasskey()
    const [authenticatorId] = resultOf(
      'create_authenticators',
      await register(h, first, passkey),
    ).authenticatorIds
    h.clock.advance(1)
    resultOf(
      'delete_authenticators',
      await h.submit(
        'delete_authenticators',
        { userId: first.userId, authenticatorIds: [authenticatorId] },
        first.as,
      ),
    )
    resultOf('create_authenticators', await register(h, second, copyOf(passkey)))
  })
})

describe('update_user_email / update_user_phone_number', () => {
  it('sets a proven e-mail (ACTIVITY_TYPE_UPDATE_USER_EMAIL) and removes it with an empty string', async () => {
    const h = await createHarness()
    const a = await account(h)
    const token = await verificationToken(h, 'New@Example.com'.toLowerCase())
    const reply = await h.submit(
      'update_user_email',
      { userId: a.userId, userEmail: 'New@Example.com', verificationToken: token },
      a.as,
    )
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_UPDATE_USER_EMAIL')
    expect(resultOf('update_user_email', reply)).toEqual({ userId: a.userId })
    expect((await h.service.store.get('users', a.userId))?.userEmail).toBe('new@example.com')
    // The account is now found by that e-mail (OTP login routes there).
    h.clock.advance(1000)
    const removed = await h.submit('update_user_email', { userId: a.userId, userEmail: '' }, a.as)
    expect(removed.status).toBe(200)
    expect((await h.service.store.get('users', a.userId))?.userEmail).toBeUndefined()
  })

  it('refuses an unproven, a mismatched, a replayed or a taken contact, naming the field', async () => {
    const h = await createHarness()
    const a = await account(h)
    const b = await account(h)
    const set = (who: typeof a, userEmail: string, verificationToken?: string) =>
      h.submit(
        'update_user_email',
        { userId: who.userId, userEmail, ...(verificationToken ? { verificationToken } : {}) },
        who.as,
      )
    // Without proof the address is stored unverified: no code goes to it, no login finds it.
    expect((await set(a, 'a@example.com')).status).toBe(200)
    expect(await h.service.store.get('users', a.userId)).toMatchObject({
      userEmail: 'a@example.com',
      userEmailUnverified: true,
    })
    h.clock.advance(1000)
    expect(errorOf(await set(a, 'not-an-email', 'x'))).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.userEmail',
    })
    const tokenForOther = await verificationToken(h, 'other@example.com')
    expect(errorOf(await set(a, 'a@example.com', tokenForOther))).toMatchObject({
      errorCode: 'VERIFICATION_TOKEN_INVALID',
      field: 'parameters.verificationToken',
    })
    const token = await verificationToken(h, 'a@example.com')
    expect((await set(a, 'a@example.com', token)).status).toBe(200)
    h.clock.advance(1000)
    // The same token again (on the other account): spent, and the address is A's anyway.
    expect((await set(b, 'a@example.com', token)).status).toBe(409)
    // A fresh token for A's address does not move it to B either.
    const second = await verificationToken(h, 'a@example.com')
    expect(errorOf(await set(b, 'a@example.com', second))).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
      field: 'parameters.verificationToken',
    })
    // A token the service did not sign proves nothing, and B cannot touch A's user.
    expect(errorOf(await set(b, 'b@example.com', 'e30.e30.e30'))).toEqual({
      status: 401,
      errorCode: 'VERIFICATION_TOKEN_INVALID',
      field: 'parameters.verificationToken',
    })
    expect(errorOf(await h.submit('update_user_email', { userId: a.userId, userEmail: '' }, b.as))).toEqual({
      status: 404,
      errorCode: 'USER_NOT_FOUND',
      field: 'parameters.userId',
    })
    expect((await h.service.store.get('users', a.userId))?.userEmail).toBe('a@example.com')
  })

  it('sets a proven phone number (ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER); an e-mail token does not prove it', async () => {
    const h = await createHarness()
    const a = await account(h)
    const phone = '+14155550123'
    const emailToken = await verificationToken(h, 'p@example.com')
    const set = (verificationToken: string) =>
      h.submit(
        'update_user_phone_number',
        { userId: a.userId, userPhoneNumber: phone, verificationToken },
        a.as,
      )
    expect(errorOf(await set(emailToken))).toMatchObject({
      errorCode: 'VERIFICATION_TOKEN_INVALID',
      field: 'parameters.verificationToken',
    })
    const token = await verificationToken(h, phone, 'OTP_TYPE_SMS')
    const reply = await set(token)
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER')
    expect(resultOf('update_user_phone_number', reply)).toEqual({ userId: a.userId })
    expect((await h.service.store.get('users', a.userId))?.userPhoneNumber).toBe(phone)
    expect(
      errorOf(await h.submit('update_user_phone_number', { userId: a.userId, userPhoneNumber: '555' }, a.as)),
    ).toEqual({ status: 400, errorCode: 'FIELD_INVALID', field: 'parameters.userPhoneNumber' })
  })
})

describe('the last way in', () => {
  /**
   * An account whose durable key is gone, signed in by a session only: what else it has (`link`)
   * is its one way back in after the session ends.
   */
  async function sessionOnly(h: Harness, link: (a: Awaited<ReturnType<typeof account>>) => Promise<Reply>) {
    const a = await account(h)
    expect((await link(a)).status).toBe(200)
    h.clock.advance(1000)
    const session = testKey()
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: session.publicKey }, a.as))
    const as = { as: session, organizationId: a.organizationId }
    h.clock.advance(1000)
    const keys = await h.service.store.findBy('apiKeys', 'userId', a.userId)
    // As a session a one-time code opened (an OTP or OAuth login): the durable key's removal, which
    // ends the sessions that key opened, leaves it.
    await h.service.store.transaction(async (tx) => {
      for (const key of keys)
        if (key.publicKey === session.publicKey) await tx.put('apiKeys', { ...key, origin: {} })
    })
    const durable = keys.filter((key) => key.credentialType === 'CREDENTIAL_TYPE_API_KEY_P256')
    resultOf(
      'delete_api_keys',
      await h.submit('delete_api_keys', { userId: a.userId, apiKeyIds: durable.map((k) => k.id) }, as),
    )
    h.clock.advance(1000)
    return { ...a, as }
  }

  it('refuses to unlink the only OAuth identity of an account it is the only way into', async () => {
    const h = await createHarness()
    const token = await oidcToken(h, 'solo')
    const a = await sessionOnly(h, (a) =>
      h.submit(
        'create_oauth_providers',
        { userId: a.userId, oauthProviders: [{ providerName: 'google', oidcToken: token }] },
        a.as,
      ),
    )
    const [provider] = await providersOf(h, a)
    const refused = await h.submit(
      'delete_oauth_providers',
      { userId: a.userId, providerIds: [provider!.providerId] },
      a.as,
    )
    expect(errorOf(refused)).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.providerIds',
    })
    expect(refused.body.message).toMatch(/without any credential/)
    expect(await providersOf(h, a)).toHaveLength(1)

    // With a verified e-mail beside it, the identity can go.
    const email = await verificationToken(h, 'solo@example.com')
    resultOf(
      'update_user_email',
      await h.submit(
        'update_user_email',
        { userId: a.userId, userEmail: 'solo@example.com', verificationToken: email },
        a.as,
      ),
    )
    h.clock.advance(1000)
    resultOf(
      'delete_oauth_providers',
      await h.submit(
        'delete_oauth_providers',
        { userId: a.userId, providerIds: [provider!.providerId] },
        a.as,
      ),
    )
    expect(await providersOf(h, a)).toEqual([])
  })

  /** An account whose only way in is a verified e-mail, signed in by a session key. */
  const emailOnly = async (h: Harness, address: string) => {
    const token = await verificationToken(h, address)
    return sessionOnly(h, (a) =>
      h.submit('update_user_email', { userId: a.userId, userEmail: address, verificationToken: token }, a.as),
    )
  }

  it("allows @turnkey/core's proven e-mail change: a token bound to verifyOtp's fresh key, stamped by the session", async () => {
    const h = await createHarness()
    const a = await emailOnly(h, 'before@example.com')
    // updateUserEmail({ email, verificationToken }): proxyGetAccount, then the session stamps it.
    const token = await verificationToken(h, 'after@example.com', 'OTP_TYPE_EMAIL', testKey().publicKey)
    const changed = await h.submit(
      'update_user_email',
      { userId: a.userId, userEmail: 'after@example.com', verificationToken: token },
      a.as,
    )
    expect(changed.status).toBe(200)
    // Stored, but unverified: the key the token is bound to did not stamp it (see contactProof).
    expect(await h.service.store.get('users', a.userId)).toMatchObject({
      userEmail: 'after@example.com',
      userEmailUnverified: true,
    })
    h.clock.advance(1000)
    // Stamped by the bound key, the same change is verified.
    const bound = testKey()
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: bound.publicKey }, a.as))
    h.clock.advance(1000)
    const again = await verificationToken(h, 'again@example.com', 'OTP_TYPE_EMAIL', bound.publicKey)
    resultOf(
      'update_user_email',
      await h.submit(
        'update_user_email',
        { userId: a.userId, userEmail: 'again@example.com', verificationToken: again },
        { as: bound, organizationId: a.organizationId },
      ),
    )
    const row = await h.service.store.get('users', a.userId)
    expect(row?.userEmail).toBe('again@example.com')
    expect(row?.userEmailUnverified).toBeUndefined()
  })

  it('refuses to remove, or swap for an unproven one, the verified e-mail or phone that is the only way in', async () => {
    const h = await createHarness()
    const a = await emailOnly(h, 'only@example.com')
    for (const userEmail of ['', 'unproven@example.com']) {
      const refused = await h.submit('update_user_email', { userId: a.userId, userEmail }, a.as)
      expect(errorOf(refused)).toEqual({
        status: 400,
        errorCode: 'FIELD_INVALID',
        field: 'parameters.userEmail',
      })
      expect(refused.body.message).toMatch(/without any credential/)
      h.clock.advance(1000)
    }
    expect(await h.service.store.get('users', a.userId)).toMatchObject({ userEmail: 'only@example.com' })
    const phone = '+14155550199'
    const sms = await verificationToken(h, phone, 'OTP_TYPE_SMS')
    const b = await sessionOnly(h, (b) =>
      h.submit(
        'update_user_phone_number',
        { userId: b.userId, userPhoneNumber: phone, verificationToken: sms },
        b.as,
      ),
    )
    const refused = await h.submit(
      'update_user_phone_number',
      { userId: b.userId, userPhoneNumber: '' },
      b.as,
    )
    expect(errorOf(refused)).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.userPhoneNumber',
    })
    expect((await h.service.store.get('users', b.userId))?.userPhoneNumber).toBe(phone)
  })

  it('removes the e-mail once another way in exists (a verified phone, an API key)', async () => {
    const h = await createHarness()
    const a = await emailOnly(h, 'two@example.com')
    const phone = '+14155550177'
    const sms = await verificationToken(h, phone, 'OTP_TYPE_SMS')
    resultOf(
      'update_user_phone_number',
      await h.submit(
        'update_user_phone_number',
        { userId: a.userId, userPhoneNumber: phone, verificationToken: sms },
        a.as,
      ),
    )
    h.clock.advance(1000)
    resultOf(
      'update_user_email',
      await h.submit('update_user_email', { userId: a.userId, userEmail: '' }, a.as),
    )
    h.clock.advance(1000)
    // The phone is now the last way in; a durable API key beside it lets it go too.
    expect(
      (await h.submit('update_user_phone_number', { userId: a.userId, userPhoneNumber: '' }, a.as)).status,
    ).toBe(400)
    h.clock.advance(1000)
    const durable = testKey()
    resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        {
          userId: a.userId,
          apiKeys: [{ apiKeyName: 'laptop', publicKey: durable.publicKey, curveType: 'API_KEY_CURVE_P256' }],
        },
        a.as,
      ),
    )
    h.clock.advance(1000)
    resultOf(
      'update_user_phone_number',
      await h.submit('update_user_phone_number', { userId: a.userId, userPhoneNumber: '' }, a.as),
    )
  })

  it("gives another sub-organization's session nothing of a verified address with a token bound to a fresh key", async () => {
    const h = await createHarness()
    const victim = await emailOnly(h, 'victim@example.com')
    const thief = await account(h)
    const token = await verificationToken(h, 'victim@example.com', 'OTP_TYPE_EMAIL', testKey().publicKey)
    const refused = await h.submit(
      'update_user_email',
      { userId: thief.userId, userEmail: 'victim@example.com', verificationToken: token },
      thief.as,
    )
    // It completes, as one without a token does, but proves nothing (security/contactProof.test.ts).
    expect(refused.status).toBe(200)
    expect(await h.service.store.get('users', thief.userId)).toMatchObject({ userEmailUnverified: true })
    // Nor can it touch the victim's user.
    h.clock.advance(1000)
    expect(
      (await h.submit('update_user_email', { userId: victim.userId, userEmail: '' }, { ...thief.as })).status,
    ).toBe(404)
    expect(await h.service.store.get('users', victim.userId)).toMatchObject({
      userEmail: 'victim@example.com',
    })
  })
})

describe('delete_sub_organization', () => {
  it('deletes the sub-organization it runs in with everything in it; its keys stop working', async () => {
    const h = await createHarness()
    const a = await account(h)
    const wallet = await h.submit('create_wallet', { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] }, a.as)
    const { walletId } = resultOf('create_wallet', wallet)
    const keys = await h.submit(
      'create_private_keys',
      {
        privateKeys: [
          {
            privateKeyName: 'k',
            curve: 'CURVE_ED25519',
            privateKeyTags: [],
            addressFormats: ['ADDRESS_FORMAT_SOLANA'],
          },
        ],
      },
      a.as,
    )
    const [{ privateKeyId }] = resultOf('create_private_keys', keys).privateKeys
    h.clock.advance(1000)
    expect(errorOf(await h.submit('delete_sub_organization', {}, a.as))).toEqual({
      status: 412,
      errorCode: 'WALLET_NOT_EXPORTED',
      field: 'parameters.deleteWithoutExport',
    })
    h.clock.advance(1000)
    const reply = await h.submit('delete_sub_organization', { deleteWithoutExport: true }, a.as)
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION')
    expect(resultOf('delete_sub_organization', reply)).toEqual({ subOrganizationUuid: a.organizationId })
    expect(await h.service.store.get('organizations', a.organizationId)).toBeUndefined()
    expect(await h.service.store.get('wallets', walletId)).toBeUndefined()
    expect(await h.service.store.get('privateKeys', privateKeyId)).toBeUndefined()
    expect(await h.service.store.findBy('users', 'organizationId', a.organizationId)).toEqual([])
    expect(await h.service.store.findBy('apiKeys', 'organizationId', a.organizationId)).toEqual([])
    h.clock.advance(1000)
    const after = await h.submit('create_wallet', { walletName: 'X', accounts: [ETHEREUM_ACCOUNT] }, a.as)
    expect(errorOf(after)).toMatchObject({ status: 401, errorCode: 'PUBLIC_KEY_NOT_FOUND' })
  })

  it('only in a sub-organization, only by its own root quorum', async () => {
    const h = await createHarness()
    const a = await account(h)
    const b = await account(h)
    expect(errorOf(await h.submit('delete_sub_organization', {}))).toEqual({
      status: 403,
      errorCode: 'PERMISSION_DENIED',
      field: 'organizationId',
    })
    // B's root key naming A's organization, and the parent's root naming A.
    expect(
      errorOf(
        await h.submit('delete_sub_organization', {}, { as: b.keys[0]!, organizationId: a.organizationId }),
      ),
    ).toEqual({ status: 403, errorCode: 'PERMISSION_DENIED', field: 'organizationId' })
    expect(
      errorOf(await h.submit('delete_sub_organization', {}, { organizationId: a.organizationId })),
    ).toEqual({ status: 403, errorCode: 'PERMISSION_DENIED', field: 'organizationId' })
    expect(await h.service.store.get('organizations', a.organizationId)).toBeDefined()
    expect(await h.service.store.get('organizations', b.organizationId)).toBeDefined()
    // A two-of-two quorum: one root's request waits for the other's vote.
    const pair = await h.createSubOrganization({ users: 2, threshold: 2 })
    const pending = await h.submit(
      'delete_sub_organization',
      {},
      { as: pair.keys[0]!, organizationId: pair.organizationId },
    )
    expect(pending.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    expect(await h.service.store.get('organizations', pair.organizationId)).toBeDefined()
  })
})
