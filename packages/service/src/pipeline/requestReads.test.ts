import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { openPostgres } from '../kernel/store/durableStores.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import type { Store } from '../kernel/store/Store.ts'
import { createHarness, type Harness, resultOf, testKey } from '../testing/harness.ts'

/**
 * On PostgreSQL a stamped request reads its credential, user, organization and the proxy's
 * configuration ahead, in one statement (`requestReads`). These rules rest on those reads; each
 * is tried on PostgreSQL, where the reads are prefetched, and on SQLite, where they are not.
 */
let cluster: PostgresCluster | undefined
let database = 0
afterAll(async () => {
  await cluster?.dispose()
})

const backends: [string, () => Promise<Store>][] = [
  ['in-memory SQLite', () => openMemoryStore()],
  [
    'PostgreSQL',
    async () => {
      const name = `reads_${++database}`
      cluster!.psql(`create database ${name}`)
      return openPostgres(cluster!.url.replace(/\/[^/]*$/, `/${name}`), { max: 4 })
    },
  ],
]

const errorOf = (reply: { status: number; body: { details?: { errorCode?: string; field?: string } } }) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
})

describe.each(backends)('a stamped request’s first reads: %s', (name, open) => {
  beforeAll(async () => {
    if (name === 'PostgreSQL' && !cluster) cluster = await startPostgres()
  }, 300_000)

  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ store: await open() })
  }, 60_000)
  afterAll(async () => {
    await h.service.close()
  })

  it('a deleted key, and the key of a deleted user, are refused on the next request', async () => {
    const kept = testKey()
    const revoked = testKey()
    const { userIds } = resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'back end',
            apiKeys: [kept.apiKey('kept'), revoked.apiKey('revoked')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    expect((await h.query('whoami', {}, { as: revoked })).body.userId).toBe(userIds[0])
    const keys = (await h.query('get_api_keys', { userId: userIds[0] })).body.apiKeys as {
      apiKeyId: string
      apiKeyName: string
    }[]
    const revokedId = keys.find((key) => key.apiKeyName === 'revoked')!.apiKeyId
    resultOf(
      'delete_api_keys',
      await h.submit('delete_api_keys', { userId: userIds[0], apiKeyIds: [revokedId] }),
    )
    expect(errorOf(await h.query('whoami', {}, { as: revoked }))).toEqual({
      status: 401,
      errorCode: 'PUBLIC_KEY_NOT_FOUND',
    })
    expect((await h.query('whoami', {}, { as: kept })).status).toBe(200)
    resultOf('delete_users', await h.submit('delete_users', { userIds }))
    expect(errorOf(await h.query('whoami', {}, { as: kept }))).toEqual({
      status: 401,
      errorCode: 'PUBLIC_KEY_NOT_FOUND',
    })
  })

  it('one public key in a parent and a sub-organization acts as the credential of the organization named', async () => {
    const shared = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [shared] })
    const parentUser = resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'twin',
            apiKeys: [shared.apiKey('twin')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    ).userIds[0]
    expect((await h.query('whoami', { organizationId }, { as: shared })).body.userId).toBe(userIds[0])
    expect((await h.query('whoami', {}, { as: shared })).body.userId).toBe(parentUser)
    // A wallet made in the sub-organization belongs to it, not to the parent.
    const made = await h.submit(
      'create_wallet',
      { walletName: 'sub', accounts: [] },
      { as: shared, organizationId },
    )
    expect(made.status).toBe(200)
    const wallets = (organization: string) =>
      h.query('list_wallets', { organizationId: organization }, { as: shared })
    expect(
      (await wallets(organizationId)).body.wallets.map((w: { walletName: string }) => w.walletName),
    ).toEqual(['sub'])
    expect((await wallets(h.organizationId)).body.wallets).toEqual([])
  })

  it('a back end’s key in many sub-organizations: each request is that sub-organization’s user, found without reading the key’s other holders', async () => {
    const backEnd = testKey()
    const subs = []
    for (let n = 0; n < 6; n++) subs.push(await h.createSubOrganization({ keys: [backEnd] }))
    // What the request's reads look up, ahead (PostgreSQL) or as they come (SQLite).
    const store = h.service.store
    const looked: string[] = []
    const { findBy, prefetch } = store
    store.findBy = ((table: string, field: string, value: unknown) => {
      looked.push(`${table}.${field}`)
      return findBy.call(store, table as never, field as never, value)
    }) as typeof store.findBy
    store.prefetch = ((lookups) => {
      for (const lookup of lookups) if ('field' in lookup) looked.push(`${lookup.table}.${lookup.field}`)
      return prefetch.call(store, lookups)
    }) as typeof store.prefetch
    try {
      for (const sub of subs) {
        looked.length = 0
        const reply = await h.query('whoami', { organizationId: sub.organizationId }, { as: backEnd })
        expect(reply.body).toMatchObject({ organizationId: sub.organizationId, userId: sub.userIds[0] })
        expect(looked).toContain('apiKeys.keyInOrganization')
        expect(looked).not.toContain('apiKeys.publicKey')
      }
      // Named where it is not (the parent holds no such key): every holder is read, and the
      // caller is another organization's user, which may not act here.
      const stranger = await h.submit(
        'create_wallet',
        { walletName: 'not mine', accounts: [] },
        { as: backEnd, organizationId: h.organizationId },
      )
      expect(stranger.status).toBe(403)
    } finally {
      store.findBy = findBy
      store.prefetch = prefetch
    }
  })

  it('the auth proxy’s key is confined in its own organization and in the sub-organizations it made', async () => {
    const config = (await h.service.store.get('proxyConfigs', h.service.dev.authProxyConfigId!))!
    const proxyKey = testKey(
      'SIGNATURE_SCHEME_TK_API_P256',
      h.service.runtime.open(config.sealedProxyPrivateKey!),
    )
    const { organizationId } = await h.createSubOrganization({ keys: [testKey()] })
    for (const target of [h.organizationId, organizationId]) {
      const reply = await h.submit(
        'create_wallet',
        { walletName: 'x', accounts: [] },
        { as: proxyKey, organizationId: target },
      )
      expect({ target, ...errorOf(reply) }).toEqual({ target, status: 403, errorCode: 'PERMISSION_DENIED' })
      const read = await h.query('list_wallets', { organizationId: target }, { as: proxyKey })
      expect({ target, status: read.status }).toEqual({ target, status: 403 })
    }
    expect((await h.query('list_suborgs', {}, { as: proxyKey })).status).toBe(200)
  })

  it('an organization that does not exist is a 404 naming organizationId; a stamp by an unknown key is a 401', async () => {
    const missing = await h.submit(
      'create_wallet',
      { walletName: 'x', accounts: [] },
      { organizationId: 'nope' },
    )
    expect({ ...errorOf(missing), field: missing.body.details?.field }).toEqual({
      status: 404,
      errorCode: 'ORGANIZATION_NOT_FOUND',
      field: 'organizationId',
    })
    const stranger = await h.submit('create_wallet', { walletName: 'x', accounts: [] }, { as: testKey() })
    expect(errorOf(stranger)).toEqual({ status: 401, errorCode: 'PUBLIC_KEY_NOT_FOUND' })
  })
})
