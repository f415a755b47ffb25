import { decodeApiKeyStamp, encodeApiKeyStamp } from '@latchkey/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { openPostgres } from '../kernel/store/durableStores.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import type { Store } from '../kernel/store/Store.ts'
import { createHarness, type Harness, resultOf, type Stamper, testKey } from '../testing/harness.ts'

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
      // Named where it is not (the parent holds no such key): one holder is read, and the
      // caller is another organization's user, which may not act here.
      looked.length = 0
      const stranger = await h.submit(
        'create_wallet',
        { walletName: 'not mine', accounts: [] },
        { as: backEnd, organizationId: h.organizationId },
      )
      expect(stranger.status).toBe(403)
      expect(looked).not.toContain('apiKeys.publicKey')
    } finally {
      store.findBy = findBy
      store.prefetch = prefetch
    }
  })

  it('a stamp naming a back end’s key without its signature reads at most the named organization’s row of it, however many organizations hold it', async () => {
    const backEnd = testKey()
    const holder = await h.createSubOrganization({ keys: [backEnd] })
    for (let n = 0; n < 5; n++) await h.createSubOrganization({ keys: [backEnd] })
    // The attacker knows the public key (it is no secret) and signs with a key of their own.
    const forger: Stamper = {
      stamp(body) {
        const [header, value] = testKey().stamp(body)
        return [header, encodeApiKeyStamp({ ...decodeApiKeyStamp(value), publicKey: backEnd.publicKey })]
      },
    }
    const store = h.service.store
    const rows: string[] = []
    const { findBy, prefetch, pageBy } = store
    store.findBy = (async (table: string, field: string, value: unknown) => {
      const found = await findBy.call(store, table as never, field as never, value)
      if (table === 'apiKeys') rows.push(...found.map(() => `findBy ${field}`))
      return found
    }) as typeof store.findBy
    store.pageBy = (async (table: string, options: never) => {
      const found = await pageBy.call(store, table as never, options)
      if (table === 'apiKeys') rows.push(...found.map(() => 'pageBy'))
      return found
    }) as typeof store.pageBy
    store.prefetch = ((lookups) => {
      for (const lookup of lookups)
        if (lookup.table === 'apiKeys' && 'field' in lookup) rows.push(`prefetch ${lookup.field}`)
      return prefetch.call(store, lookups)
    }) as typeof store.prefetch
    try {
      const tries = [
        // No organization named, one where the key is, one where it is not.
        () => h.post('/public/v1/query/whoami', '{}', Object.fromEntries([forger.stamp('{}')])),
        () => h.query('whoami', { organizationId: holder.organizationId }, { as: forger }),
        () => h.submit('create_wallet', { walletName: 'x', accounts: [] }, { as: forger }),
      ]
      for (const attempt of tries) {
        rows.length = 0
        expect(errorOf(await attempt())).toEqual({ status: 401, errorCode: 'STAMP_INVALID' })
        // PostgreSQL reads ahead the one row the named organization may hold, with the rest of
        // the request's reads, while the stamp is checked; nothing reads the key's other holders.
        expect(rows.filter((read) => read !== 'prefetch keyInOrganization')).toEqual([])
        expect(rows.length).toBeLessThanOrEqual(1)
      }
      // The key's holder, with no organization named: one row of the key, not one per holder.
      rows.length = 0
      const body = '{}'
      const reply = await h.post('/public/v1/query/whoami', body, Object.fromEntries([backEnd.stamp(body)]))
      expect(reply.status).toBe(400)
      expect(rows).toEqual(['pageBy'])
    } finally {
      store.findBy = findBy
      store.prefetch = prefetch
      store.pageBy = pageBy
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
