import { describe, expect, it } from 'vitest'
import type { Tables } from '../kernel/store/model.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fillRows,
  type Harness,
  resultOf,
  softPasskey,
  type TestKey,
  testKey,
} from '../testing/harness.ts'
import { RESOURCE_LIMITS, type ResourceLimit } from './resourceLimits.ts'

/**
 * An end user is the root of an organization of their own (a sub-organization, which anyone gets
 * by wallet sign-up): what it holds is capped per organization (and per user), not only per call.
 * The rows up to a cap are written straight into the store (thousands of them over HTTP would
 * take minutes); the creates at the cap go through the API.
 */

async function endUser(h: Harness, options: Parameters<Harness['createSubOrganization']>[0] = {}) {
  const sub = await h.createSubOrganization(options)
  return { sub, as: { as: sub.keys[0] as TestKey, organizationId: sub.organizationId } }
}

const refusal = (limit: ResourceLimit, field: string) => ({
  status: 412,
  body: {
    code: 9,
    message: expect.stringContaining(`at most ${RESOURCE_LIMITS[limit]} (${limit})`),
    details: { errorCode: 'RESOURCE_LIMIT_REACHED', field, limit, max: RESOURCE_LIMITS[limit] },
  },
})

const user = (i: number) => ({ userName: `u${i}`, apiKeys: [], authenticators: [], oauthProviders: [] })

describe('what one organization holds is capped', () => {
  it('users: create_users fills up to the cap, and no further, whatever the batch', async () => {
    const h = await createHarness()
    const { sub, as } = await endUser(h)
    // The sub-organization's root user and the filler: 2 short of the cap.
    await fillRows(h, 'users', RESOURCE_LIMITS.usersPerOrganization - 3, (i) => ({
      organizationId: sub.organizationId,
      userName: `filler ${i}`,
    }))
    h.clock.advance(1)
    const three = await h.submit('create_users', { users: [user(1), user(2), user(3)] }, as)
    expect({ status: three.status, body: three.body }).toEqual(
      refusal('usersPerOrganization', 'parameters.users'),
    )
    h.clock.advance(1)
    resultOf('create_users', await h.submit('create_users', { users: [user(1), user(2)] }, as))
    h.clock.advance(1)
    const over = await h.submit('create_users', { users: [user(3)] }, as)
    expect({ status: over.status, body: over.body }).toEqual(
      refusal('usersPerOrganization', 'parameters.users'),
    )
    // Control: another organization is not full.
    resultOf('create_users', await h.submit('create_users', { users: [user(4)] }))
  })

  it('users: two creates at one short of the cap, at once: one is made', async () => {
    const h = await createHarness()
    const { sub, as } = await endUser(h)
    await fillRows(h, 'users', RESOURCE_LIMITS.usersPerOrganization - 2, (i) => ({
      organizationId: sub.organizationId,
      userName: `filler ${i}`,
    }))
    h.clock.advance(1)
    const replies = await Promise.all([
      h.submit('create_users', { users: [user(1)] }, as),
      h.submit('create_users', { users: [user(2)] }, as),
    ])
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 412])
    expect(await h.service.store.count('users', 'organizationId', sub.organizationId)).toBe(
      RESOURCE_LIMITS.usersPerOrganization,
    )
  })

  it('wallet accounts: create_wallet_accounts and create_wallet count every account of the organization', async () => {
    const h = await createHarness()
    const { sub, as } = await endUser(h, { wallet: { walletName: 'w', accounts: [] } })
    await fillRows(h, 'walletAccounts', RESOURCE_LIMITS.walletAccountsPerOrganization - 1, (i) => ({
      organizationId: sub.organizationId,
      walletId: 'filler',
      address: `filler${i}`,
      publicKey: '',
      sealedPrivateKey: '',
      ...ETHEREUM_ACCOUNT,
    }))
    const accounts = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ ...ETHEREUM_ACCOUNT, path: `m/44'/60'/0'/0/${i}` }))
    h.clock.advance(1)
    const two = await h.submit(
      'create_wallet_accounts',
      { walletId: sub.walletId, accounts: accounts(2) },
      as,
    )
    expect({ status: two.status, body: two.body }).toEqual(
      refusal('walletAccountsPerOrganization', 'parameters.accounts'),
    )
    h.clock.advance(1)
    const inWallet = await h.submit('create_wallet', { walletName: 'more', accounts: accounts(2) }, as)
    expect({ status: inWallet.status, body: inWallet.body }).toEqual(
      refusal('walletAccountsPerOrganization', 'parameters.accounts'),
    )
    // Deriving without storing (`persist: false`) adds nothing.
    h.clock.advance(1)
    resultOf(
      'create_wallet_accounts',
      await h.submit(
        'create_wallet_accounts',
        { walletId: sub.walletId, accounts: accounts(5), persist: false },
        as,
      ),
    )
    h.clock.advance(1)
    resultOf(
      'create_wallet_accounts',
      await h.submit('create_wallet_accounts', { walletId: sub.walletId, accounts: accounts(1) }, as),
    )
    h.clock.advance(1)
    const full = await h.submit(
      'create_wallet_accounts',
      { walletId: sub.walletId, accounts: accounts(1) },
      as,
    )
    expect(full.status).toBe(412)
  }, 60_000)

  it('wallets: create_wallet stops at the cap (counted again in its transaction near it)', async () => {
    const h = await createHarness()
    const { sub, as } = await endUser(h)
    await fillRows(h, 'wallets', RESOURCE_LIMITS.walletsPerOrganization - 2, (i) => ({
      organizationId: sub.organizationId,
      name: `filler ${i}`,
      sealedMnemonic: '',
      mnemonicLength: 12,
      exported: false,
      imported: false,
    }))
    h.clock.advance(1)
    const both = await Promise.all([
      h.submit('create_wallet', { walletName: 'a', accounts: [] }, as),
      h.submit('create_wallet', { walletName: 'b', accounts: [] }, as),
    ])
    expect(both.map((reply) => reply.status)).toEqual([200, 200])
    h.clock.advance(1)
    const over = await h.submit('create_wallet', { walletName: 'c', accounts: [] }, as)
    expect({ status: over.status, body: over.body }).toEqual(
      refusal('walletsPerOrganization', 'parameters.walletName'),
    )
    // Control: far from the cap, a wallet is made.
    resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'parent', accounts: [] }))
  })

  it('private keys and user tags per organization', async () => {
    const h = await createHarness()
    const { sub, as } = await endUser(h)
    await fillRows(h, 'privateKeys', RESOURCE_LIMITS.privateKeysPerOrganization, (i) => ({
      organizationId: sub.organizationId,
      name: `filler ${i}`,
      curve: 'CURVE_SECP256K1' as const,
      publicKey: '',
      sealedPrivateKey: '',
      addresses: [],
      privateKeyTags: [],
      exported: false,
      imported: false,
    }))
    await fillRows(h, 'userTags', RESOURCE_LIMITS.userTagsPerOrganization, (i) => ({
      organizationId: sub.organizationId,
      name: `filler ${i}`,
      userIds: [],
    }))
    const key = {
      privateKeyName: 'one more',
      curve: 'CURVE_SECP256K1',
      privateKeyTags: [],
      addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
    }
    h.clock.advance(1)
    const keys = await h.submit('create_private_keys', { privateKeys: [key] }, as)
    expect({ status: keys.status, body: keys.body }).toEqual(
      refusal('privateKeysPerOrganization', 'parameters.privateKeys'),
    )
    const tag = await h.submit('create_user_tag', { userTagName: 'one more', userIds: [] }, as)
    expect({ status: tag.status, body: tag.body }).toEqual(
      refusal('userTagsPerOrganization', 'parameters.userTagName'),
    )
    // Control: the parent holds none.
    resultOf('create_private_keys', await h.submit('create_private_keys', { privateKeys: [key] }))
    resultOf('create_user_tag', await h.submit('create_user_tag', { userTagName: 'one more', userIds: [] }))
  })

  it('API keys and passkeys per user; login sessions’ keys are not counted', async () => {
    const h = await createHarness()
    const { sub, as } = await endUser(h)
    const userId = sub.userIds[0]!
    const keyRow = (credentialType: Tables['apiKeys']['credentialType']) => (i: number) => ({
      organizationId: sub.organizationId,
      userId,
      name: `filler ${i}`,
      publicKey: `02${String(i).padStart(64, '0')}${credentialType.length}`,
      keyInOrganization: `filler${i}${credentialType}@${sub.organizationId}`,
      curve: 'API_KEY_CURVE_P256' as const,
      credentialType,
    })
    // The user's own key and 98 more: one short of the cap; and 200 live sessions' keys.
    await fillRows(h, 'apiKeys', RESOURCE_LIMITS.apiKeysPerUser - 2, keyRow('CREDENTIAL_TYPE_API_KEY_P256'))
    await h.service.store.transaction(async (tx) => {
      for (let i = 0; i < 200; i++)
        await tx.put('apiKeys', {
          ...keyRow('CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256')(i),
          id: `session-${i}`,
          expirationSeconds: '900',
          createdAt: h.clock.now(),
          updatedAt: h.clock.now(),
        })
    })
    const apiKey = (n: number) => ({
      apiKeyName: `k${n}`,
      publicKey: testKey().publicKey,
      curveType: 'API_KEY_CURVE_P256',
    })
    h.clock.advance(1)
    const two = await h.submit('create_api_keys', { userId, apiKeys: [apiKey(1), apiKey(2)] }, as)
    expect({ status: two.status, body: two.body }).toEqual(refusal('apiKeysPerUser', 'parameters.apiKeys'))
    h.clock.advance(1)
    resultOf('create_api_keys', await h.submit('create_api_keys', { userId, apiKeys: [apiKey(1)] }, as))

    await fillRows(h, 'authenticators', RESOURCE_LIMITS.authenticatorsPerUser, (i) => ({
      organizationId: sub.organizationId,
      userId,
      name: `filler ${i}`,
      credentialId: `filler${i}`,
      cosePublicKey: '',
      publicKeyHex: '',
      counter: 0,
      aaguid: '',
      model: '',
      attestationType: 'none',
      transports: [],
    }))
    h.clock.advance(1)
    const passkey = await h.submit(
      'create_authenticators',
      { userId, authenticators: [softPasskey().register()] },
      as,
    )
    expect({ status: passkey.status, body: passkey.body }).toEqual(
      refusal('authenticatorsPerUser', 'parameters.authenticators'),
    )
  })
})
