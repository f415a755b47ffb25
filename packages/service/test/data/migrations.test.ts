// Migrations as their own step: `migrate` applies what is pending and says what it did, a start
// with --no-migrate refuses a database that is behind (naming the pending migrations), and every
// start refuses a database migrated by a newer version, on SQLite and on PostgreSQL.
import { join } from 'node:path'
import { bytesToHex } from '@noble/hashes/utils.js'
import { isoBase64URL } from '@simplewebauthn/server/helpers'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { passkeySightingId, publicKeyMark } from '../../src/kernel/passkeySightings.ts'
import { sqliteBackend } from '../../src/kernel/store/backends/sqliteBackend.ts'
import { DATABASE_FILE, openDataDir, openPostgres } from '../../src/kernel/store/durableStores.ts'
import {
  ACCOUNT_LOOKUP_COLUMNS,
  DatabaseAheadError,
  knownMigrations,
  MigrationsPendingError,
} from '../../src/kernel/store/migrations.ts'
import {
  type ActivityRow,
  type ApiKeyRow,
  type AuthenticatorRow,
  apiKeyInOrganization,
  registeredKeyOf,
  type SendTransactionRow,
  type UserRow,
} from '../../src/kernel/store/model.ts'
import { wasmSqlite } from '../../src/kernel/store/wasmSqlite.ts'
import { softPasskey } from '../../src/testing/harness.ts'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { hashTree, removeDir, tempDir } from '../durability/tempDir.ts'
import { killAll, runToExit } from '../support/serviceProcess.ts'
import { runCommand } from './runCommand.ts'

const LATEST = knownMigrations(sqliteBackend)
const NEWEST = LATEST.at(-1)!
/** The tables the newest migration creates: dropped with its record, the database is one version behind. */
const NEWEST_TABLES: Record<string, string[]> = {
  '0005_rate_limit_buckets': ['rateLimitBuckets'],
  '0006_spending_limits': ['spendingLimits', 'spendingLimitUsage'],
  '0008_webhooks': ['webhookEndpoints', 'webhookDeliveries'],
  '0009_import': ['importedUsers', 'importClaims', 'importKeys'],
  '0010_session_profiles': ['sessionProfiles'],
  '0015_webhook_events': ['webhookEvents'],
  '0018_import_spent_bundles': ['importSpentBundles'],
  '0025_passkey_sightings': ['passkeySightings'],
}
/**
 * What undoes a newest migration of PostgreSQL alone (it changes nothing on SQLite, where removing
 * its record undoes it).
 */
const NEWEST_UNDO_POSTGRES: Record<string, string[]> = {
  '0017_spending_usage_uncompressed': ['ALTER TABLE "spendingLimitUsage" RESET (toast_tuple_target)'],
}
/** What undoes a newest migration that creates no table (the same SQL on SQLite and PostgreSQL). */
const NEWEST_UNDO: Record<string, string[]> = {
  '0011_import_contacts': ['userEmail', 'userPhoneNumber'].flatMap((column) => [
    `DROP INDEX "users_${column}"`,
    `ALTER TABLE users DROP COLUMN "${column}"`,
  ]),
  '0016_api_key_lookup': [
    'DROP INDEX "apiKeys_keyInOrganization"',
    'ALTER TABLE "apiKeys" DROP COLUMN "keyInOrganization"',
  ],
  '0019_account_lookups': Object.entries(ACCOUNT_LOOKUP_COLUMNS).flatMap(([table, columns]) =>
    columns.flatMap((column) => [
      `DROP INDEX "${table}_${column}"`,
      `ALTER TABLE "${table}" DROP COLUMN "${column}"`,
    ]),
  ),
  '0021_verified_contacts': ['verifiedEmail', 'verifiedPhone'].flatMap((column) => [
    `DROP INDEX "users_${column}"`,
    `ALTER TABLE users DROP COLUMN "${column}"`,
  ]),
  '0028_session_profile_keys': [
    'DROP INDEX "apiKeys_sessionProfileId"',
    'ALTER TABLE "apiKeys" DROP COLUMN "sessionProfileId"',
  ],
  '0027_webhook_waiting_sources': [
    'DROP INDEX "webhookDeliveries_waitingFrom_queueKey"',
    'ALTER TABLE "webhookDeliveries" DROP COLUMN "waitingFrom"',
  ],
  '0026_registered_keys': [
    'DROP INDEX "apiKeys_registeredKey_id"',
    'ALTER TABLE "apiKeys" DROP COLUMN "registeredKey"',
  ],
  '0023_pending_jobs_by_kind': [
    'DROP INDEX "jobs_pendingKind_runAfter"',
    'ALTER TABLE jobs DROP COLUMN "pendingKind"',
  ],
  '0022_plugin_row_sweeps': [
    'DROP INDEX "pluginRows_kind_staleAt"',
    'ALTER TABLE "pluginRows" DROP COLUMN "staleAt"',
  ],
  '0020_open_sends': ['openIn', 'openHash', 'openAccount'].flatMap((column) => [
    `DROP INDEX "sendTransactions_${column}"`,
    `ALTER TABLE "sendTransactions" DROP COLUMN "${column}"`,
  ]),
  '0014_webhook_delivery_queue': [
    'DROP INDEX "jobs_state_runAfter"',
    'DROP INDEX "webhookDeliveries_listKey"',
    'DROP INDEX "webhookDeliveries_queue"',
    ...['waitingFor', 'queueKey', 'listKey'].map(
      (column) => `ALTER TABLE "webhookDeliveries" DROP COLUMN "${column}"`,
    ),
  ],
}
const NEWEST_TABLE: string[] = NEWEST_TABLES[NEWEST] ?? []
const UNDO_NEWEST = [...NEWEST_TABLE.map((table) => `DROP TABLE "${table}"`), ...(NEWEST_UNDO[NEWEST] ?? [])]
const UNDO_NEWEST_POSTGRES = [...UNDO_NEWEST, ...(NEWEST_UNDO_POSTGRES[NEWEST] ?? [])]
/** Newest migrations that change rows alone: removing their record undoes them (they apply again). */
const NEWEST_ROWS_ONLY = new Set(['0024_session_origins'])
if (UNDO_NEWEST_POSTGRES.length === 0 && !NEWEST_ROWS_ONLY.has(NEWEST))
  throw new Error(
    `name the tables migration ${NEWEST} creates in NEWEST_TABLES, or its undoing in NEWEST_UNDO`,
  )
const FUTURE = '9999_from_a_newer_version'

const dirs: string[] = []
afterAll(() => {
  killAll()
  for (const dir of dirs) removeDir(dir)
})

/** A data dir whose schema stops before this version's newest migration. */
async function dataDirBehind(): Promise<string> {
  const dir = tempDir('migrate')
  dirs.push(dir)
  await (await openDataDir(dir)).close()
  const database = wasmSqlite(join(dir, DATABASE_FILE))
  try {
    // A WAL database opens without shared memory only in exclusive mode (as openDataDir opens it).
    database.exec('PRAGMA locking_mode = EXCLUSIVE')
    database.exec(`DELETE FROM kysely_migration WHERE name = '${NEWEST}'`)
    for (const statement of UNDO_NEWEST) database.exec(statement)
  } finally {
    database.close()
  }
  return dir
}

/**
 * Rolls the data dir `dir` back to before migration `name`: its record and those of every later
 * one deleted, what each made undone (they apply again, in order, when it is next opened), then
 * `more` run (say, a field removed from the documents as an older version wrote them).
 */
function rollBackTo(dir: string, name: string, more: string[] = []) {
  const database = wasmSqlite(join(dir, DATABASE_FILE))
  try {
    // A WAL database opens without shared memory only in exclusive mode (as openDataDir opens it).
    database.exec('PRAGMA locking_mode = EXCLUSIVE')
    database.exec(`DELETE FROM kysely_migration WHERE name >= '${name}'`)
    for (const later of LATEST.filter((migration) => migration >= name)) {
      for (const table of NEWEST_TABLES[later] ?? []) database.exec(`DROP TABLE "${table}"`)
      for (const statement of NEWEST_UNDO[later] ?? []) database.exec(statement)
    }
    for (const statement of more) database.exec(statement)
  } finally {
    database.close()
  }
}

/**
 * API keys as a version before 0024 wrote them (`origin` stripped afterwards by SQL) for user-1,
 * created at 1 with the passkey `signed-up-with` (`later-passkey` added at 5): a registered key, a
 * read-write session and a legacy login key (their opener unknown), the sessions of one-time tokens
 * (OTP, OAuth, e-mail auth), the sign-up's first session key (registered with a lifetime at 1), a
 * key with a lifetime added later (at 9), and a session that recorded its origin.
 */
const SESSION_ORIGIN_ROWS: ApiKeyRow[] = (
  [
    ['registered', 'CREDENTIAL_TYPE_API_KEY_P256', false, 1],
    ['passkey-session', 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256', true, 3],
    ['login-key', 'CREDENTIAL_TYPE_LOGIN', true, 3],
    ['otp-session', 'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256', true, 3],
    ['oauth-session', 'CREDENTIAL_TYPE_OAUTH_KEY_P256', true, 3],
    ['email-session', 'CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256', true, 3],
    ['first-session', 'CREDENTIAL_TYPE_API_KEY_P256', true, 1],
    ['temporary-key', 'CREDENTIAL_TYPE_API_KEY_P256', true, 9],
    ['recorded-session', 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256', true, 3],
  ] as const
).map(([id, credentialType, expires, createdAt], index) => {
  const publicKey = `0${2 + (index % 2)}`.padEnd(66, String(index))
  return {
    id,
    organizationId: 'org-1',
    userId: 'user-1',
    name: id,
    publicKey,
    keyInOrganization: apiKeyInOrganization(publicKey, 'org-1'),
    curve: 'API_KEY_CURVE_P256',
    credentialType,
    ...(expires ? { expirationSeconds: '2592000' } : {}),
    ...(id === 'recorded-session' ? { origin: { authenticatorIds: ['later-passkey'] } } : {}),
    createdAt,
    updatedAt: createdAt,
  }
})
const SESSION_ORIGIN_USER: UserRow = {
  id: 'user-1',
  organizationId: 'org-1',
  userName: 'Pat',
  createdAt: 1,
  updatedAt: 1,
}
const SESSION_ORIGIN_PASSKEYS: AuthenticatorRow[] = (
  [
    ['signed-up-with', 1],
    ['later-passkey', 5],
  ] as const
).map(([id, createdAt]) => ({
  id,
  organizationId: 'org-1',
  userId: 'user-1',
  name: id,
  credentialId: id,
  cosePublicKey: '',
  publicKeyHex: '',
  counter: 0,
  aaguid: '',
  model: '',
  attestationType: 'none',
  transports: [],
  createdAt,
  updatedAt: createdAt,
}))
/** The rows of SESSION_ORIGIN_ROWS written as a version before 0024 did. */
async function writeBeforeSessionOrigins(store: Awaited<ReturnType<typeof openDataDir>>) {
  await store.transaction(async (tx) => {
    await tx.put('users', SESSION_ORIGIN_USER)
    for (const row of SESSION_ORIGIN_PASSKEYS) await tx.put('authenticators', row)
    for (const row of SESSION_ORIGIN_ROWS) await tx.put('apiKeys', row)
  })
}
/**
 * Passkeys a version before 0025 showed: a passkey row, and the records of registrations (failed,
 * or a user's whose passkey was removed since), by the credential ids each shows: the id sent and
 * the one inside its attestation object. A wallet's record shows none.
 */
const SHOWN = softPasskey()
const SHOWN_BEFORE_SIGHTINGS = [
  'held-credential',
  publicKeyMark('a5010203'),
  'failed-credential',
  SHOWN.credentialId,
  publicKeyMark(bytesToHex(isoBase64URL.toBuffer(SHOWN.cosePublicKey))),
  'removed-credential',
]
async function writeBeforeSightings(store: Awaited<ReturnType<typeof openDataDir>>) {
  const activity = (id: string, path: string, intent: Record<string, unknown>): ActivityRow => ({
    id,
    organizationId: 'org-1',
    path,
    type: 'ACTIVITY_TYPE_X',
    status: 'ACTIVITY_STATUS_FAILED',
    intent,
    fingerprint: id,
    userId: 'user-1',
    credentialId: 'key-1',
    callerOrganizationId: 'org-1',
    createdAt: 1,
    updatedAt: 1,
  })
  const registered = SHOWN.register(undefined, 'Phone')
  await store.transaction(async (tx) => {
    await tx.put('authenticators', {
      ...SESSION_ORIGIN_PASSKEYS[0]!,
      id: 'held',
      credentialId: 'held-credential',
      publicKeyHex: 'a5010203',
    })
    await tx.put(
      'activities',
      activity('failed', 'create_authenticators', {
        authenticators: [
          { ...registered, attestation: { ...registered.attestation, credentialId: 'failed-credential' } },
        ],
      }),
    )
    await tx.put(
      'activities',
      activity('removed', 'create_users', {
        users: [{ authenticators: [{ attestation: { credentialId: 'removed-credential' } }] }],
      }),
    )
    await tx.put(
      'activities',
      activity('wallet', 'create_wallet', { authenticators: [{ credentialId: 'not-a-passkey' }] }),
    )
  })
}
/** The activity each sighting of those credential ids and of the wallet's names, by credential id. */
const sightingsIn = async (store: Awaited<ReturnType<typeof openDataDir>>) => {
  const sightings: Record<string, string | undefined> = {}
  for (const id of [...SHOWN_BEFORE_SIGHTINGS, 'not-a-passkey'])
    sightings[id] = (await store.get('passkeySightings', passkeySightingId(id)))?.activityId
  return sightings
}
const SIGHTED = {
  ...Object.fromEntries(SHOWN_BEFORE_SIGHTINGS.map((id) => [id, ''])),
  'not-a-passkey': undefined,
}

/**
 * The keys of SESSION_ORIGIN_ROWS once 0024 ran, by id, with their origin: the sessions whose
 * opener is unknown end; a one-time token's get the empty origin, the first session key the
 * passkey registered with it; the registered and temporary keys stay as they were.
 */
const AFTER_SESSION_ORIGINS = {
  'email-session': {},
  'first-session': { authenticatorIds: ['signed-up-with'] },
  'oauth-session': {},
  'otp-session': {},
  'recorded-session': { authenticatorIds: ['later-passkey'] },
  registered: undefined,
  'temporary-key': undefined,
}
/** The keys of user-1 in `store`, by id, with their origin. */
const originsIn = async (store: Awaited<ReturnType<typeof openDataDir>>) =>
  Object.fromEntries(
    (await store.findBy('apiKeys', 'userId', 'user-1'))
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((row) => [row.id, row.origin]),
  )

describe('migrations on a data dir', { timeout: 120_000 }, () => {
  it('--no-migrate refuses a data dir that is behind, naming the pending migration, and changes nothing', async () => {
    const dir = await dataDirBehind()
    const before = hashTree(dir)[DATABASE_FILE]
    await expect(openDataDir(dir, { migrate: false })).rejects.toThrow(MigrationsPendingError)
    const refused = await runToExit({ args: ['--data-dir', dir, '--no-migrate'] })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`migration ${NEWEST} pending`)
    expect(refused.stderr).toContain('latchkey-service migrate')
    expect(hashTree(dir)[DATABASE_FILE]).toBe(before)
  })

  it('migrate applies what is pending and says so, then finds nothing to do; the service then starts with --no-migrate', async () => {
    const dir = await dataDirBehind()
    const first = await runCommand(['migrate', '--data-dir', dir])
    expect(first).toMatchObject({ code: 0 })
    expect(first.stdout).toBe(`applied ${NEWEST} to ${dir}\n`)
    const second = await runCommand(['migrate', '--data-dir', dir])
    expect(second.code).toBe(0)
    expect(second.stdout).toContain(`${dir} is current: nothing to apply (${LATEST.join(', ')})`)
    const started = await runToExit({ args: ['--data-dir', dir, '--no-migrate'] })
    expect(started.signal).toBe('SIGKILL')
    expect(JSON.parse(started.stdout.split('\n')[0]!)).toHaveProperty('organizationId')
  })

  it('0016 fills the key-in-organization column of the API keys written before it: they authenticate by it', async () => {
    const dir = tempDir('api-keys')
    dirs.push(dir)
    const store = await openDataDir(dir)
    const key = {
      id: 'key-1',
      organizationId: 'org-1',
      userId: 'user-1',
      name: 'written before 0016',
      publicKey: '02'.padEnd(66, 'a'),
      keyInOrganization: apiKeyInOrganization('02'.padEnd(66, 'a'), 'org-1'),
      curve: 'API_KEY_CURVE_P256' as const,
      credentialType: 'CREDENTIAL_TYPE_API_KEY_P256' as const,
      createdAt: 1,
      updatedAt: 1,
    }
    await store.transaction((tx) => tx.put('apiKeys', key))
    await store.close()
    // As a version before 0016 left it: no column, no index, the document without the field (0017
    // changes nothing on SQLite; the tables of later ones are dropped).
    rollBackTo(dir, '0016_api_key_lookup', [
      `UPDATE "apiKeys" SET data = json_remove(data, '$.keyInOrganization')`,
    ])
    const migrated = await openDataDir(dir)
    try {
      const found = await migrated.findBy('apiKeys', 'keyInOrganization', key.keyInOrganization)
      expect(found.map((row) => row.id)).toEqual(['key-1'])
      expect(
        await migrated.findBy('apiKeys', 'keyInOrganization', apiKeyInOrganization(key.publicKey, 'org-2')),
      ).toEqual([])
    } finally {
      await migrated.close()
    }
  })

  it('0020 fills the open-send columns of the sends written before it: open ones are found by organization, transaction and account, final ones not', async () => {
    const dir = tempDir('open-sends')
    dirs.push(dir)
    const store = await openDataDir(dir)
    const send = (id: string, status: SendTransactionRow['status']): SendTransactionRow => ({
      id,
      organizationId: 'org-1',
      activityId: `activity-${id}`,
      caip2: 'eip155:1',
      sender: '0x00000000000000000000000000000000000000Aa',
      account: '0x00000000000000000000000000000000000000Aa',
      sponsored: false,
      signedTransaction: '0x02',
      txHash: `0x${id === 'open' ? 'AB' : 'cd'}${'00'.repeat(31)}`,
      status,
      attempts: 0,
      notBefore: 0,
      replacements: 0,
      createdAt: 1,
      updatedAt: 1,
    })
    await store.transaction(async (tx) => {
      await tx.put('sendTransactions', send('open', 'BROADCASTED'))
      await tx.put('sendTransactions', send('done', 'INCLUDED'))
    })
    await store.close()
    // As a version before 0020 left it: no columns, no indexes.
    rollBackTo(dir, '0020_open_sends')
    const migrated = await openDataDir(dir)
    try {
      const ids = async (field: 'openIn' | 'openHash' | 'openAccount', value: string) =>
        (await migrated.findBy('sendTransactions', field, value)).map((row) => row.id)
      expect(await ids('openIn', 'org-1')).toEqual(['open'])
      expect(await ids('openHash', `eip155:1 0xab${'00'.repeat(31)}`)).toEqual(['open'])
      expect(await ids('openHash', `eip155:1 0xcd${'00'.repeat(31)}`)).toEqual([])
      expect(await ids('openAccount', `eip155:1 0x${'00'.repeat(19)}aa`)).toEqual(['open'])
      expect(await migrated.count('sendTransactions', 'openIn', 'org-1')).toBe(1)
    } finally {
      await migrated.close()
    }
  })

  it('0021 fills the verified-contact columns of the users written before it as every write does: a verified address is found, normalised, an unverified one not', async () => {
    const dir = tempDir('verified-contacts')
    dirs.push(dir)
    const store = await openDataDir(dir)
    const user = (id: string, more: Partial<UserRow>): UserRow => ({
      id,
      organizationId: 'org-1',
      userName: id,
      createdAt: 1,
      updatedAt: 1,
      ...more,
    })
    await store.transaction(async (tx) => {
      await tx.put('users', user('verified', { userEmail: 'Ada@Example.com', userPhoneNumber: '+15550001' }))
      // Spelt as SQL's lower() and trim() would leave it: filled as every write fills it.
      await tx.put('users', user('accented', { userEmail: '\tÉlodie@Example.com' }))
      await tx.put(
        'users',
        user('unverified', {
          userEmail: 'ada@example.com',
          userEmailUnverified: true,
          userPhoneNumber: '+15550001',
          userPhoneNumberUnverified: true,
        }),
      )
    })
    await store.close()
    // As a version before 0021 left it: no columns, no indexes.
    rollBackTo(dir, '0021_verified_contacts')
    const migrated = await openDataDir(dir)
    try {
      const ids = async (field: 'verifiedEmail' | 'verifiedPhone', value: string) =>
        (await migrated.findBy('users', field, value)).map((row) => row.id)
      expect(await ids('verifiedEmail', 'ada@example.com')).toEqual(['verified'])
      expect(await ids('verifiedPhone', '+15550001')).toEqual(['verified'])
      expect(await ids('verifiedEmail', 'élodie@example.com')).toEqual(['accented'])
    } finally {
      await migrated.close()
    }
  })

  it("0024 ends the stamped sessions written before it, which record no origin; a one-time token's and a sign-up's first session get theirs; registered keys and recorded sessions stay", async () => {
    const dir = tempDir('session-origins')
    dirs.push(dir)
    const store = await openDataDir(dir)
    await writeBeforeSessionOrigins(store)
    await store.close()
    rollBackTo(dir, '0024_session_origins', [
      `UPDATE "apiKeys" SET data = json_remove(data, '$.origin') WHERE id != 'recorded-session'`,
    ])
    const migrated = await openDataDir(dir)
    try {
      expect(await originsIn(migrated)).toStrictEqual(AFTER_SESSION_ORIGINS)
    } finally {
      await migrated.close()
    }
  })

  it('0025 records a sighting of every passkey a row or a record showed before it, naming no activity', async () => {
    const dir = tempDir('passkey-sightings')
    dirs.push(dir)
    const store = await openDataDir(dir)
    await writeBeforeSightings(store)
    await store.close()
    rollBackTo(dir, '0025_passkey_sightings')
    const migrated = await openDataDir(dir)
    try {
      expect(await sightingsIn(migrated)).toStrictEqual(SIGHTED)
    } finally {
      await migrated.close()
    }
  })

  it("0026 fills the registered-key column of the API keys written before it as every write does: a registered key's public key, proven or not; none for a session key", async () => {
    const dir = tempDir('registered-keys')
    dirs.push(dir)
    const store = await openDataDir(dir)
    const publicKey = `02${'ab'.repeat(32)}`
    const key = (
      id: string,
      credentialType: ApiKeyRow['credentialType'],
      more: Partial<ApiKeyRow> = {},
    ): ApiKeyRow => ({
      id,
      organizationId: `org-${id}`,
      userId: `user-${id}`,
      name: id,
      publicKey,
      keyInOrganization: apiKeyInOrganization(publicKey, `org-${id}`),
      curve: 'API_KEY_CURVE_SECP256K1',
      credentialType,
      createdAt: 1,
      updatedAt: 1,
      ...more,
    })
    await store.transaction(async (tx) => {
      await tx.put('apiKeys', key('proven', 'CREDENTIAL_TYPE_API_KEY_SECP256K1'))
      await tx.put('apiKeys', key('unproven', 'CREDENTIAL_TYPE_API_KEY_SECP256K1', { unproven: true }))
      await tx.put(
        'apiKeys',
        key('session', 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256', { expirationSeconds: '900' }),
      )
    })
    await store.close()
    // As a version before 0026 left it: no column, no index.
    rollBackTo(dir, '0026_registered_keys')
    const migrated = await openDataDir(dir)
    try {
      const ids = async (value: string) =>
        (await migrated.findBy('apiKeys', 'registeredKey', value)).map((row) => row.id)
      expect(await ids(registeredKeyOf(publicKey, true))).toEqual(['proven'])
      expect(await ids(registeredKeyOf(publicKey, false))).toEqual(['unproven'])
      expect((await migrated.findBy('apiKeys', 'publicKey', publicKey)).map((row) => row.id)).toEqual([
        'proven',
        'session',
        'unproven',
      ])
    } finally {
      await migrated.close()
    }
  })

  it("0028 fills the session-profile column of the API keys written before it: a profile's session keys are found by it, no other key", async () => {
    const dir = tempDir('session-profile-keys')
    dirs.push(dir)
    const store = await openDataDir(dir)
    const key = (id: string, more: Partial<ApiKeyRow> = {}): ApiKeyRow => {
      const publicKey = `02${id.charCodeAt(0).toString(16).padStart(2, '0').repeat(32)}`
      return {
        id,
        organizationId: 'org-1',
        userId: 'user-1',
        name: id,
        publicKey,
        keyInOrganization: apiKeyInOrganization(publicKey, 'org-1'),
        curve: 'API_KEY_CURVE_P256',
        credentialType: 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
        expirationSeconds: '900',
        createdAt: 1,
        updatedAt: 1,
        ...more,
      }
    }
    await store.transaction(async (tx) => {
      await tx.put('apiKeys', key('agent', { sessionProfileId: 'profile-1' }))
      await tx.put('apiKeys', key('bot', { sessionProfileId: 'profile-1' }))
      await tx.put('apiKeys', key('other', { sessionProfileId: 'profile-2' }))
      await tx.put('apiKeys', key('plain'))
    })
    await store.close()
    // As a version before 0028 left it: no column, no index.
    rollBackTo(dir, '0028_session_profile_keys')
    const migrated = await openDataDir(dir)
    try {
      const ids = async (value: string) =>
        (await migrated.findBy('apiKeys', 'sessionProfileId', value)).map((row) => row.id).sort()
      expect(await ids('profile-1')).toEqual(['agent', 'bot'])
      expect(await ids('profile-2')).toEqual(['other'])
      expect((await migrated.findBy('apiKeys', 'userId', 'user-1')).map((row) => row.id).sort()).toEqual([
        'agent',
        'bot',
        'other',
        'plain',
      ])
    } finally {
      await migrated.close()
    }
  })

  it('an older version refuses a data dir migrated ahead of it, with or without --no-migrate, and changes nothing', async () => {
    const dir = tempDir('ahead')
    dirs.push(dir)
    await (await openDataDir(dir)).close()
    const database = wasmSqlite(join(dir, DATABASE_FILE))
    try {
      database.exec('PRAGMA locking_mode = EXCLUSIVE')
      database.exec(
        `INSERT INTO kysely_migration (name, timestamp) VALUES ('${FUTURE}', '2030-01-01T00:00:00.000Z')`,
      )
    } finally {
      database.close()
    }
    const before = hashTree(dir)[DATABASE_FILE]
    await expect(openDataDir(dir)).rejects.toThrow(DatabaseAheadError)
    for (const flags of [[], ['--no-migrate']]) {
      const refused = await runToExit({ args: ['--data-dir', dir, ...flags] })
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(
        `migrated by a newer latchkey-service (migration ${FUTURE} unknown to this version)`,
      )
    }
    const migrate = await runCommand(['migrate', '--data-dir', dir])
    expect(migrate.code).toBe(1)
    expect(migrate.stderr).toContain(FUTURE)
    expect(hashTree(dir)[DATABASE_FILE]).toBe(before)
  })
})

describe('migrations on PostgreSQL', () => {
  let cluster: PostgresCluster
  beforeAll(async () => {
    cluster = await startPostgres()
  }, 600_000)
  afterAll(() => cluster?.dispose())

  const sqlOn = async (statements: string[]) => {
    const client = new pg.Client({ connectionString: cluster.url })
    await client.connect()
    try {
      const results = []
      for (const statement of statements) results.push(await client.query(statement))
      return results
    } finally {
      await client.end()
    }
  }
  /** What migration `first` and those after it made, undone (they apply again when next opened). */
  const undoneFrom = (first: string) =>
    LATEST.filter((name) => name >= first).flatMap((name) => [
      ...(NEWEST_TABLES[name] ?? []).map((table) => `DROP TABLE "${table}"`),
      ...(NEWEST_UNDO[name] ?? []),
    ])
  /** The storage parameters of `table` (`name=value`), as PostgreSQL keeps them. */
  const storageOf = async (table: string): Promise<string[]> => {
    const [result] = await sqlOn([`SELECT reloptions FROM pg_class WHERE relname = '${table}'`])
    return result!.rows[0]?.reloptions ?? []
  }

  it("0024 ends the stamped sessions written before it, which record no origin; a one-time token's and a sign-up's first session get theirs", async () => {
    const store = await openPostgres(cluster.url)
    await writeBeforeSessionOrigins(store)
    await store.close()
    await sqlOn([
      `DELETE FROM kysely_migration WHERE name >= '0024_session_origins'`,
      // What the migrations after it made, undone: they apply again after it.
      ...undoneFrom('0024_session_origins'),
      `UPDATE "apiKeys" SET data = (data::jsonb - 'origin')::text WHERE id != 'recorded-session'`,
    ])
    const migrated = await openPostgres(cluster.url)
    try {
      expect(await originsIn(migrated)).toStrictEqual(AFTER_SESSION_ORIGINS)
    } finally {
      await migrated.close()
    }
  })

  it('0025 records a sighting of every passkey a row or a record showed before it, naming no activity', async () => {
    const store = await openPostgres(cluster.url)
    await writeBeforeSightings(store)
    await store.close()
    await sqlOn([
      `DELETE FROM kysely_migration WHERE name >= '0025_passkey_sightings'`,
      ...undoneFrom('0025_passkey_sightings'),
    ])
    const migrated = await openPostgres(cluster.url)
    try {
      expect(await sightingsIn(migrated)).toStrictEqual(SIGHTED)
    } finally {
      await migrated.close()
    }
  })

  it('refuses with --no-migrate while behind, migrates once with migrate, then refuses a database migrated ahead', {
    timeout: 300_000,
  }, async () => {
    await (await openPostgres(cluster.url)).close()
    await sqlOn([`DELETE FROM kysely_migration WHERE name = '${NEWEST}'`, ...UNDO_NEWEST_POSTGRES])
    const env = { LATCHKEY_MASTER_KEY: '11'.repeat(32) }
    await expect(openPostgres(cluster.url, { migrate: false })).rejects.toThrow(MigrationsPendingError)
    const refused = await runToExit({ args: ['--database-url', cluster.url, '--no-migrate'], env })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(
      `PostgreSQL database is behind this version of latchkey-service: migration ${NEWEST} pending`,
    )

    const first = await runCommand(['migrate', '--database-url', cluster.url])
    expect(first.code).toBe(0)
    expect(first.stdout).toBe(`applied ${NEWEST} to the PostgreSQL database\n`)
    // 0017: a usage row is rewritten by every limited signing and never compressed below 8 KB.
    expect(await storageOf('spendingLimitUsage')).toEqual(['fillfactor=10', 'toast_tuple_target=8160'])
    const second = await runCommand(['migrate', '--database-url', cluster.url])
    expect(second.stdout).toContain('is current: nothing to apply')
    const started = await runToExit({ args: ['--database-url', cluster.url, '--no-migrate'], env })
    expect(started.signal).toBe('SIGKILL')

    await sqlOn([
      `INSERT INTO kysely_migration (name, timestamp) VALUES ('${FUTURE}', '2030-01-01T00:00:00.000Z')`,
    ])
    await expect(openPostgres(cluster.url)).rejects.toThrow(DatabaseAheadError)
    const ahead = await runToExit({ args: ['--database-url', cluster.url], env })
    expect(ahead.code).toBe(1)
    expect(ahead.stderr).toContain(
      `PostgreSQL database was migrated by a newer latchkey-service (migration ${FUTURE}`,
    )
  })
})
