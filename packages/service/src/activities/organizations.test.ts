import { describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  resultOf,
  SOLANA_ACCOUNT,
  softPasskey,
  testKey,
} from '../testing/harness.ts'

const rootUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  userName,
  apiKeys: [],
  authenticators: [],
  oauthProviders: [],
  ...extra,
})

describe('create_sub_organization', () => {
  it('creates root users with keys and a wallet, and reports them', async () => {
    const h = await createHarness()
    const key = testKey('SIGNATURE_SCHEME_TK_API_ED25519')
    const reply = await h.submit('create_sub_organization', {
      subOrganizationName: 'Alice org',
      rootQuorumThreshold: 1,
      rootUsers: [
        rootUser('Alice', {
          userEmail: 'Alice@Example.com',
          userPhoneNumber: '+15551234567',
          apiKeys: [key.apiKey('laptop')],
        }),
      ],
      wallet: { walletName: 'Default', accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT] },
      disableSmsAuth: true,
    })
    expect(reply.status).toBe(200)
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7')
    expect(Object.keys(reply.body.activity.intent)).toEqual(['createSubOrganizationIntentV7'])
    const result = reply.body.activity.result.createSubOrganizationResultV7
    expect(result).toEqual({
      subOrganizationId: expect.any(String),
      wallet: { walletId: expect.any(String), addresses: [expect.stringMatching(/^0x/), expect.any(String)] },
      rootUserIds: [expect.any(String)],
    })
    const users = await h.query('list_users', {}, { as: key, organizationId: result.subOrganizationId })
    expect(users.body.users).toEqual([
      {
        userId: result.rootUserIds[0],
        userName: 'Alice',
        userEmail: 'alice@example.com',
        userPhoneNumber: '+15551234567',
        authenticators: [],
        apiKeys: [
          {
            apiKeyId: expect.any(String),
            apiKeyName: 'laptop',
            credential: { publicKey: key.publicKey, type: 'CREDENTIAL_TYPE_API_KEY_ED25519' },
            createdAt: { seconds: String(h.clock.now() / 1000), nanos: '0' },
            updatedAt: { seconds: String(h.clock.now() / 1000), nanos: '0' },
          },
        ],
        userTags: [],
        oauthProviders: [],
        createdAt: { seconds: String(h.clock.now() / 1000), nanos: '0' },
        updatedAt: { seconds: String(h.clock.now() / 1000), nanos: '0' },
      },
    ])
    expect(await h.service.store.get('organizations', result.subOrganizationId)).toMatchObject({
      name: 'Alice org',
      parentOrganizationId: h.organizationId,
      disableSmsAuth: true,
    })
  })

  it('validates quorum, users, keys and contacts, naming the field', async () => {
    const h = await createHarness()
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { rootQuorumThreshold: 2, rootUsers: [rootUser('a')] },
        'parameters.rootQuorumThreshold',
        'QUORUM_INVALID',
      ],
      [
        { rootQuorumThreshold: 0, rootUsers: [rootUser('a')] },
        'parameters.rootQuorumThreshold',
        'FIELD_INVALID',
      ],
      [{ rootQuorumThreshold: 1, rootUsers: [] }, 'parameters.rootUsers', 'FIELD_REQUIRED'],
      [
        { rootQuorumThreshold: 1, rootUsers: [{ userName: 'a' }] },
        'parameters.rootUsers[0].apiKeys',
        'FIELD_REQUIRED',
      ],
      [
        { rootQuorumThreshold: 1, rootUsers: [rootUser('a', { userPhoneNumber: '555-1234' })] },
        'parameters.rootUsers[0].userPhoneNumber',
        'FIELD_INVALID',
      ],
      [
        {
          rootQuorumThreshold: 1,
          rootUsers: [
            rootUser('a', {
              apiKeys: [{ apiKeyName: 'k', publicKey: '02abcd', curveType: 'API_KEY_CURVE_P256' }],
            }),
          ],
        },
        'parameters.rootUsers[0].apiKeys[0].publicKey',
        'FIELD_INVALID',
      ],
      [
        {
          rootQuorumThreshold: 1,
          rootUsers: [rootUser('a', { apiKeys: [{ ...testKey().apiKey(), curveType: 'API_KEY_CURVE_X' }] })],
        },
        'parameters.rootUsers[0].apiKeys[0].curveType',
        'ENUM_INVALID',
      ],
      [
        {
          rootQuorumThreshold: 1,
          rootUsers: [rootUser('a')],
          wallet: { walletName: 'w', accounts: [], mnemonicLength: 11 },
        },
        'parameters.wallet.mnemonicLength',
        'FIELD_INVALID',
      ],
    ]
    for (const [parameters, field, errorCode] of cases) {
      const reply = await h.submit('create_sub_organization', { subOrganizationName: 'X', ...parameters })
      expect({
        status: reply.status,
        field: reply.body.details?.field,
        errorCode: reply.body.details?.errorCode,
      }).toEqual({
        status: 400,
        field,
        errorCode,
      })
    }
    expect(await h.service.store.findBy('organizations', 'parentOrganizationId', h.organizationId)).toEqual(
      [],
    )
  })

  it('leaves nothing behind when a later part fails (atomic)', async () => {
    const h = await createHarness()
    const count = () =>
      Promise.all(
        ['users', 'apiKeys', 'organizations', 'authenticators'].map(
          async (t) => (await h.service.store.all(t as 'users')).length,
        ),
      )
    const before = await count()
    const passkey = softPasskey()
    const registration = passkey.register()
    const reply = await h.submit('create_sub_organization', {
      subOrganizationName: 'Half',
      rootQuorumThreshold: 1,
      rootUsers: [
        rootUser('ok', { apiKeys: [testKey().apiKey()] }),
        rootUser('bad', {
          authenticators: [
            { ...registration, attestation: { ...registration.attestation, clientDataJson: 'e30' } },
          ],
        }),
      ],
    })
    expect(reply).toMatchObject({ status: 400, body: { details: { errorCode: 'ATTESTATION_INVALID' } } })
    expect(await count()).toEqual(before)
    const failed = (await h.service.store.all('activities')).at(-1)!
    expect(failed).toMatchObject({
      status: 'ACTIVITY_STATUS_FAILED',
      failure: { details: { errorCode: 'ATTESTATION_INVALID' } },
    })
  })
})

describe('list_suborgs', () => {
  it('filters by every filter type and paginates with cursors', async () => {
    const h = await createHarness()
    const passkey = softPasskey()
    const key = testKey()
    const alice = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'Alice org',
        rootQuorumThreshold: 1,
        rootUsers: [
          rootUser('alice', {
            userEmail: 'alice@example.com',
            userPhoneNumber: '+15550000001',
            apiKeys: [key.apiKey()],
            authenticators: [passkey.register()],
          }),
        ],
        wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] },
      }),
    )
    const others = []
    for (let i = 0; i < 11; i++)
      others.push((await h.createSubOrganization({ name: `Org ${i}` })).organizationId)
    const find = async (filterType: string, filterValue: string) =>
      (await h.query('list_suborgs', { filterType, filterValue })).body.organizationIds
    const id = alice.subOrganizationId
    expect(await find('NAME', 'Alice org')).toEqual([id])
    expect(await find('USERNAME', 'alice')).toEqual([id])
    expect(await find('EMAIL', 'ALICE@example.com')).toEqual([id])
    expect(await find('PHONE_NUMBER', '+15550000001')).toEqual([id])
    expect(await find('CREDENTIAL_ID', passkey.credentialId)).toEqual([id])
    expect(await find('PUBLIC_KEY', key.publicKey)).toEqual([id])
    expect(await find('WALLET_ACCOUNT_ADDRESS', alice.wallet.addresses[0])).toEqual([id])
    expect(await find('EMAIL', 'nobody@example.com')).toEqual([])
    const unsigned = (claims: object) =>
      `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`
    expect(await find('OIDC_TOKEN', unsigned({ iss: 'https://accounts.google.com', sub: '42' }))).toEqual([])
    await h.service.store.transaction(async (tx) => {
      await tx.put('oauthProviders', {
        id: 'p1',
        organizationId: id,
        userId: alice.rootUserIds[0],
        providerName: 'Google',
        issuer: 'https://accounts.google.com',
        audience: 'app',
        subject: '42',
        createdAt: 0,
        updatedAt: 0,
      })
    })
    expect(await find('OIDC_TOKEN', unsigned({ iss: 'https://accounts.google.com', sub: '42' }))).toEqual([
      id,
    ])
    expect((await h.query('list_suborgs', { filterType: 'OIDC_TOKEN', filterValue: 'garbage' })).status).toBe(
      400,
    )
    expect(
      (await h.query('list_suborgs', { filterType: 'SHOE_SIZE', filterValue: '9' })).body.details,
    ).toMatchObject({
      errorCode: 'ENUM_INVALID',
      field: 'filterType',
    })
    expect((await h.query('list_suborgs', { filterType: 'NAME' })).body.details).toMatchObject({
      field: 'filterValue',
    })

    const all = [id, ...others]
    const page1 = (await h.query('list_suborgs')).body.organizationIds
    expect(page1).toEqual(all.slice(0, 10))
    const page2 = (await h.query('list_suborgs', { paginationOptions: { after: page1.at(-1) } })).body
      .organizationIds
    expect(page2).toEqual(all.slice(10))
    const before = (await h.query('list_suborgs', { paginationOptions: { before: all[5], limit: '3' } })).body
      .organizationIds
    expect(before).toEqual(all.slice(2, 5))
    expect(
      (await h.query('list_suborgs', { paginationOptions: { limit: '100' } })).body.organizationIds,
    ).toEqual(all)
    expect((await h.query('list_suborgs', { paginationOptions: { limit: '101' } })).status).toBe(400)
  })
})

describe('users and tags', () => {
  it('renames users, creates and updates tags atomically', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ users: 2 })
    const at = { organizationId: sub.organizationId, as: sub.keys[0]! }
    const [u1, u2] = sub.userIds as [string, string]
    expect(
      resultOf('update_user_name', await h.submit('update_user_name', { userId: u2, userName: 'Bob' }, at)),
    ).toEqual({ userId: u2 })
    expect((await h.query('get_user', { userId: u2 }, at)).body.user.userName).toBe('Bob')
    expect((await h.query('get_user', { userId: 'nobody' }, at)).status).toBe(404)

    const tag = resultOf(
      'create_user_tag',
      await h.submit('create_user_tag', { userTagName: 'admins', userIds: [u1] }, at),
    )
    expect(tag).toEqual({ userTagId: expect.any(String), userIds: [u1] })
    const duplicateName = await h.submit('create_user_tag', { userTagName: 'admins', userIds: [] }, at)
    expect(duplicateName).toMatchObject({
      status: 409,
      body: { details: { field: 'parameters.userTagName' } },
    })
    const unknownUser = await h.submit('create_user_tag', { userTagName: 'x', userIds: ['ghost'] }, at)
    expect(unknownUser).toMatchObject({ status: 404, body: { details: { field: 'parameters.userIds[0]' } } })

    const failed = await h.submit(
      'update_user_tag',
      { userTagId: tag.userTagId, newUserTagName: 'owners', addUserIds: [u2, 'ghost'], removeUserIds: [u1] },
      at,
    )
    expect(failed).toMatchObject({ status: 404, body: { details: { field: 'parameters.addUserIds[1]' } } })
    expect((await h.query('list_user_tags', {}, at)).body.userTags).toEqual([
      expect.objectContaining({ userTagId: tag.userTagId, userTagName: 'admins', userIds: [u1] }),
    ])
    const updated = await h.submit(
      'update_user_tag',
      { userTagId: tag.userTagId, newUserTagName: 'owners', addUserIds: [u2], removeUserIds: [u1] },
      at,
    )
    expect(resultOf('update_user_tag', updated)).toEqual({ userTagId: tag.userTagId })
    expect((await h.query('list_user_tags', {}, at)).body.userTags).toEqual([
      expect.objectContaining({ userTagName: 'owners', userIds: [u2] }),
    ])
    expect((await h.query('get_user', { userId: u2 }, at)).body.user.userTags).toEqual([tag.userTagId])
    const missingArrays = await h.submit('update_user_tag', { userTagId: tag.userTagId }, at)
    expect(missingArrays).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'FIELD_REQUIRED', field: 'parameters.addUserIds' } },
    })
    const unknownTag = await h.submit(
      'update_user_tag',
      { userTagId: 'nope', addUserIds: [], removeUserIds: [] },
      at,
    )
    expect(unknownTag).toMatchObject({ status: 404, body: { details: { errorCode: 'USER_TAG_NOT_FOUND' } } })
  })

  it('serialises concurrent activities: one of two identical tag names wins', async () => {
    const h = await createHarness()
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        h.clock.advance(1)
        return h.submit(
          'create_user_tag',
          { userTagName: 'race', userIds: [] },
          { timestampMs: String(h.clock.now() + i) },
        )
      }),
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, ...Array(9).fill(409)])
    expect((await h.query('list_user_tags')).body.userTags).toHaveLength(1)
  })

  it('whoami answers the caller', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ name: 'Who' })
    expect(
      (await h.query('whoami', {}, { organizationId: sub.organizationId, as: sub.keys[0]! })).body,
    ).toEqual({
      organizationId: sub.organizationId,
      organizationName: 'Who',
      userId: sub.userIds[0],
      username: 'User 1',
    })
  })
})

describe('create_fiat_on_ramp_credential', () => {
  it('stores the credential with its secrets sealed', async () => {
    const h = await createHarness()
    const reply = await h.submit('create_fiat_on_ramp_credential', {
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
      projectId: 'p1',
      publishableApiKey: 'pk_test',
      encryptedSecretApiKey: 'secret-ciphertext',
      sandboxMode: true,
    })
    const { fiatOnRampCredentialId } = resultOf('create_fiat_on_ramp_credential', reply)
    const row = (await h.service.store.get('fiatCredentials', fiatOnRampCredentialId))!
    expect(row).toMatchObject({
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
      sandboxMode: true,
      publishableApiKey: 'pk_test',
    })
    expect(row.sealedSecretApiKey).not.toContain('secret-ciphertext')
    expect(h.service.runtime.openText(row.sealedSecretApiKey)).toBe('secret-ciphertext')
    const bad = await h.submit('create_fiat_on_ramp_credential', {
      onrampProvider: 'COINBASE',
      publishableApiKey: 'pk',
      encryptedSecretApiKey: 's',
    })
    expect(bad).toMatchObject({ status: 400, body: { details: { field: 'parameters.onrampProvider' } } })
  })
})
