import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import { ServiceError } from '../base/errors.ts'
import { passkeySightingId, passkeysShownIn, publicKeyMark } from '../passkeySightings.ts'
import type { StoreBackend } from './backends/StoreBackend.ts'
import { classify, unreachable } from './databaseErrors.ts'
import { type AuthenticatorRow, staleAtKey, type UserRow, verifiedContactOf } from './model.ts'

/**
 * The schema's versions, applied in order at start by Kysely's migrator (which takes a lock, so
 * several instances starting on one empty PostgreSQL database apply each version once). A version
 * is never edited after it ships: change the schema with a new one.
 *
 * Every table keeps a row as its JSON document (`data`, typed by `model.ts`) plus real columns for
 * each field the service looks rows up by, with an index on each; uniqueness the service relies on
 * is a constraint here, so races resolve in the database.
 */
const V1_TABLES: Record<string, string[]> = {
  service: [],
  organizations: ['parentOrganizationId'],
  users: ['organizationId'],
  apiKeys: ['publicKey', 'userId', 'organizationId'],
  authenticators: ['credentialId', 'userId', 'organizationId'],
  oauthProviders: ['userId', 'subject', 'organizationId'],
  userTags: ['organizationId'],
  wallets: ['organizationId'],
  walletAccounts: ['walletId', 'address', 'organizationId'],
  privateKeys: ['organizationId'],
  activities: ['organizationId', 'fingerprint'],
  votes: ['activityId'],
  policyEvaluations: ['activityId'],
  policies: ['organizationId'],
  proxyConfigs: ['organizationId'],
  fiatCredentials: ['organizationId'],
  importTargets: ['userId'],
  pluginRows: ['kind'],
}

/** Columns with a unique index. */
const UNIQUE_V1: Record<string, string[]> = {
  // An activity is its stamp's credential and body: a replay finds the first one, never a twin.
  activities: ['fingerprint'],
}

function v1(text: StoreBackend['textType']): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const [table, columns] of Object.entries(V1_TABLES)) {
        let create = db.schema
          .createTable(table)
          .addColumn('id', text, (column) => column.primaryKey())
          .addColumn('data', 'text', (column) => column.notNull())
        for (const column of columns) create = create.addColumn(column, text)
        await create.execute()
        for (const column of columns) {
          const unique = UNIQUE_V1[table]?.includes(column) ?? false
          let index = db.schema.createIndex(`${table}_${column}`).on(table).column(column)
          if (unique) index = index.unique()
          await index.execute()
        }
      }
    },
    async down(db: Kysely<unknown>) {
      for (const table of Object.keys(V1_TABLES)) await db.schema.dropTable(table).execute()
    },
  }
}

// Durable jobs (jobs/JobQueue.ts): one table, a column per field the worker reads or claims by.
const JOBS_COLUMNS = ['kind', 'state', 'runAfter', 'attempts', 'claimedBy', 'claimedUntil']

// Master-key rotation: the versions of the master key and the rotation's progress (one row).
function keyring(text: StoreBackend['textType']): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('keyring')
        .addColumn('id', text, (column) => column.primaryKey())
        .addColumn('data', 'text', (column) => column.notNull())
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('keyring').execute()
    },
  }
}

/** A field of a row's JSON document, as the backend's SQL reads it (text, or null when absent). */
const jsonField = (backend: StoreBackend, name: string) =>
  backend.name === 'PostgreSQL'
    ? sql`(data::json->>${sql.lit(name)})`
    : sql`json_extract(data, ${sql.lit(`$.${name}`)})`

/**
 * Webhook deliveries (webhooks/, issue 39) read by what waits and by page: `waitingFor` (the
 * endpoint's id while a delivery is pending or paused) and `queueKey` (`a` and its sequence
 * number, 12 digits, or `b` and its listKey before it is numbered) make an endpoint's queue an
 * index the sender reads a page at a time, head first; `listKey` (the time it was recorded, 15
 * digits, then hex) with an index on (endpointId, listKey) makes its listing and its retention
 * keyset reads. Filled from the rows. And the job worker's due jobs by an index on (state, runAfter):
 * one page, whatever the backlog.
 */
function webhookDeliveryQueue(backend: StoreBackend): Migration {
  const postgres = backend.name === 'PostgreSQL'
  const field = (name: string) => jsonField(backend, name)
  const padded = (name: string, digits: number) =>
    postgres
      ? sql`lpad(${field(name)}, ${sql.lit(digits)}, '0')`
      : sql`substr(${sql.lit('0'.repeat(digits))} || ${field(name)}, ${sql.lit(-digits)})`
  const columns = ['waitingFor', 'queueKey', 'listKey']
  return {
    async up(db: Kysely<unknown>) {
      for (const column of columns)
        await db.schema.alterTable('webhookDeliveries').addColumn(column, backend.textType).execute()
      // Every delivery recorded before was numbered in its event's transaction.
      // Digits and lower-case hex only, as the service writes them (any collation orders them alike).
      const hexOfId = postgres ? sql`md5(id)` : sql`lower(hex(id))`
      await sql`update ${sql.table('webhookDeliveries')} set
        ${sql.ref('listKey')} = ${padded('createdAt', 15)} || ${hexOfId},
        ${sql.ref('queueKey')} = 'a' || ${padded('sequence', 12)},
        ${sql.ref('waitingFor')} = case when state in ('pending', 'paused') then ${sql.ref('endpointId')} end`.execute(
        db,
      )
      await db.schema
        .createIndex('webhookDeliveries_queue')
        .on('webhookDeliveries')
        .columns(['waitingFor', 'queueKey'])
        .execute()
      await db.schema
        .createIndex('webhookDeliveries_listKey')
        .on('webhookDeliveries')
        .columns(['endpointId', 'listKey'])
        .execute()
      // The job worker's due jobs, earliest first (JobQueue.duePending): a queue of deliveries
      // thousands deep is read a page at a time.
      await db.schema.createIndex('jobs_state_runAfter').on('jobs').columns(['state', 'runAfter']).execute()
    },
    async down(db: Kysely<unknown>) {
      for (const index of ['jobs_state_runAfter', 'webhookDeliveries_listKey', 'webhookDeliveries_queue'])
        await db.schema.dropIndex(index).execute()
      for (const column of columns)
        await db.schema.alterTable('webhookDeliveries').dropColumn(column).execute()
    },
  }
}

/**
 * Webhook events (webhooks/, issue 39, wave 10): one row per event, written in the transaction of
 * what happened, read by the fan-out (deliver.ts `fanOut`) oldest first by an index on (waiting,
 * listKey), which numbers it per endpoint as delivery rows and deletes it.
 */
function webhookEvents(text: StoreBackend['textType']): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhookEvents')
        .addColumn('id', text, (column) => column.primaryKey())
        .addColumn('data', 'text', (column) => column.notNull())
        .addColumn('waiting', text)
        .addColumn('listKey', text)
        .execute()
      await db.schema
        .createIndex('webhookEvents_waiting')
        .on('webhookEvents')
        .columns(['waiting', 'listKey'])
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('webhookEvents').execute()
    },
  }
}

/** Tables made by one later version, each with its looked-up columns (indexed, none unique). */
function addTables(tables: Record<string, string[]>, text: StoreBackend['textType']): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const [table, columns] of Object.entries(tables)) {
        let create = db.schema
          .createTable(table)
          .addColumn('id', text, (column) => column.primaryKey())
          .addColumn('data', 'text', (column) => column.notNull())
        for (const column of columns) create = create.addColumn(column, text)
        await create.execute()
        for (const column of columns)
          await db.schema.createIndex(`${table}_${column}`).on(table).column(column).execute()
      }
    },
    async down(db: Kysely<unknown>) {
      for (const table of Object.keys(tables)) await db.schema.dropTable(table).execute()
    },
  }
}

// ---- sending: sends with their broadcast state, outer nonces, sponsor keys, sponsored gas ----
const SENDING_TABLES: Record<string, string[]> = {
  sendTransactions: ['organizationId', 'status'],
  nonces: [],
  sponsors: [],
  gasUsage: ['userDay', 'organizationMonth'],
}

// ---- spending limits (limits/, issue 37): the limits, and one usage row per limit ----
const SPENDING_LIMIT_TABLES: Record<string, string[]> = {
  spendingLimits: ['organizationId'],
  spendingLimitUsage: ['organizationId'],
}

/**
 * Every signature under a limit reads its usage row by id and rewrites it, in a SERIALIZABLE
 * transaction on PostgreSQL. PostgreSQL's predicate locks on a B-tree are per page: an update that
 * adds an index entry (not a heap-only update) would conflict with every transaction that read any
 * usage row of that index page, limits that share nothing. Room on each heap page keeps the
 * updates heap-only (no indexed column changes), so only spends of one limit conflict.
 */
function spendingLimitTables(backend: StoreBackend): Migration {
  const tables = addTables(SPENDING_LIMIT_TABLES, backend.textType)
  return {
    async up(db: Kysely<unknown>) {
      await tables.up(db)
      if (backend.name === 'PostgreSQL')
        await sql`alter table "spendingLimitUsage" set (fillfactor = 10)`.execute(db)
    },
    down: tables.down!,
  }
}

/**
 * A usage row's document (its limit's spends, one line of text) can pass 2 KB, PostgreSQL's
 * threshold for compressing a row it writes (TOAST_TUPLE_THRESHOLD). Every rewrite of the row then
 * ran pglz over the document, and the line of spends is too irregular for pglz to save the quarter
 * it requires, so the row was stored as it was: seen with `perf` during `limits-pg`, about a tenth of
 * PostgreSQL's CPU in a limited signing (docs/spending-limits.md, "Cost"). A target of a whole
 * page's worth keeps a usage row out of compression up to 8 KB; a larger one is compressed, or moved
 * out of line, as before.
 */
function spendingUsageUncompressed(backend: StoreBackend): Migration {
  const postgres = backend.name === 'PostgreSQL'
  return {
    async up(db: Kysely<unknown>) {
      if (postgres) await sql`alter table "spendingLimitUsage" set (toast_tuple_target = 8160)`.execute(db)
    },
    async down(db: Kysely<unknown>) {
      if (postgres) await sql`alter table "spendingLimitUsage" reset (toast_tuple_target)`.execute(db)
    },
  }
}

// Rate limits (pipeline/rateLimitCounters.ts): one bucket per budget, shared by the instances on
// a database. Not a document table: one upsert statement decides and charges a request, so its
// columns are the bucket itself and the store's row API never reads it.
function rateLimitBuckets(text: StoreBackend['textType']): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('rateLimitBuckets')
        .addColumn('key', text, (column) => column.primaryKey())
        .addColumn('tat', 'double precision', (column) => column.notNull())
        .addColumn('intervalMs', 'double precision', (column) => column.notNull())
        .addColumn('toleranceMs', 'double precision', (column) => column.notNull())
        .addColumn('allowed', 'boolean', (column) => column.notNull())
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('rateLimitBuckets').execute()
    },
  }
}

/**
 * Users looked up by contact (issue 40): an import refuses an e-mail or phone number another
 * account of the parent already holds, whichever way it came (pregenerated, signed up, imported).
 * Two indexed columns on `users`, filled from the rows' documents.
 */
function importContacts(backend: StoreBackend): Migration {
  const fields = ['userEmail', 'userPhoneNumber']
  return {
    async up(db: Kysely<unknown>) {
      for (const field of fields) {
        await db.schema.alterTable('users').addColumn(field, backend.textType).execute()
        await db.schema.createIndex(`users_${field}`).on('users').column(field).execute()
        await sql`update users set ${sql.ref(field)} = ${jsonField(backend, field)}`.execute(db)
      }
    },
    async down(db: Kysely<unknown>) {
      for (const field of fields) {
        await db.schema.dropIndex(`users_${field}`).execute()
        await db.schema.alterTable('users').dropColumn(field).execute()
      }
    },
  }
}

/**
 * API keys looked up by public key within one organization (`ApiKeyRow.keyInOrganization`): a
 * request names its organization, and a key held in thousands of sub-organizations was read, and
 * every row of it parsed, for each request. A column and its index, filled from the two columns
 * it joins (the same SQL on SQLite and PostgreSQL).
 */
const apiKeyLookup = (text: StoreBackend['textType']): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('apiKeys').addColumn('keyInOrganization', text).execute()
    await db.schema
      .createIndex('apiKeys_keyInOrganization')
      .on('apiKeys')
      .column('keyInOrganization')
      .execute()
    await sql`update "apiKeys" set "keyInOrganization" = "publicKey" || '@' || "organizationId"`.execute(db)
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('apiKeys_keyInOrganization').execute()
    await db.schema.alterTable('apiKeys').dropColumn('keyInOrganization').execute()
  },
})

/**
 * What `list_suborgs` finds a parent's accounts by (the auth proxy's anonymous `/v1/account`, and
 * every login and sign-up, among them): an organization by name, a user by user name, a passkey by
 * public key, each an indexed column filled from the rows' documents, so that a lookup reads the
 * rows that match, never every account of the parent.
 */
export const ACCOUNT_LOOKUP_COLUMNS: Record<string, string[]> = {
  organizations: ['name'],
  users: ['userName'],
  authenticators: ['publicKeyHex'],
}

function accountLookups(backend: StoreBackend): Migration {
  const field = (name: string) => jsonField(backend, name)
  return {
    async up(db: Kysely<unknown>) {
      for (const [table, columns] of Object.entries(ACCOUNT_LOOKUP_COLUMNS))
        for (const column of columns) {
          await db.schema.alterTable(table).addColumn(column, backend.textType).execute()
          await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${field(column)}`.execute(db)
          await db.schema.createIndex(`${table}_${column}`).on(table).column(column).execute()
        }
    },
    async down(db: Kysely<unknown>) {
      for (const [table, columns] of Object.entries(ACCOUNT_LOOKUP_COLUMNS))
        for (const column of columns) {
          await db.schema.dropIndex(`${table}_${column}`).execute()
          await db.schema.alterTable(table).dropColumn(column).execute()
        }
    },
  }
}

/**
 * The open sends of an organization, an open send by its transaction, and by its account, each
 * read through an index (`SendTransactionRow.openIn`, `openHash`, `openAccount`): the open-send
 * cap, a resubmission's lookup and a batch's look for its account's sends in flight read their own
 * rows, never every open send of the service. Filled from the rows' documents.
 */
function openSendLookups(backend: StoreBackend): Migration {
  const field = (name: string) => jsonField(backend, name)
  const columns = ['openIn', 'openHash', 'openAccount']
  return {
    async up(db: Kysely<unknown>) {
      for (const column of columns)
        await db.schema.alterTable('sendTransactions').addColumn(column, backend.textType).execute()
      await sql`update ${sql.table('sendTransactions')} set
        ${sql.ref('openIn')} = ${sql.ref('organizationId')},
        ${sql.ref('openHash')} = ${field('caip2')} || ' ' || lower(${field('txHash')}),
        ${sql.ref('openAccount')} = ${field('caip2')} || ' ' || lower(${field('account')})
        where ${sql.ref('status')} in ('PENDING', 'BROADCASTED')`.execute(db)
      for (const column of columns)
        await db.schema
          .createIndex(`sendTransactions_${column}`)
          .on('sendTransactions')
          .column(column)
          .execute()
    },
    async down(db: Kysely<unknown>) {
      for (const column of columns) {
        await db.schema.dropIndex(`sendTransactions_${column}`).execute()
        await db.schema.alterTable('sendTransactions').dropColumn(column).execute()
      }
    },
  }
}

/**
 * Users by their verified contacts (`UserRow.verifiedEmail`, `verifiedPhone`, derived as the
 * store writes a row): account lookups and login routing read the users holding the contact
 * verified, never the unverified copies of it anyone may set in their own account. Filled from the
 * rows' documents by `verifiedContactOf` itself, as every later write fills them (SQL's `lower`
 * and `trim` fold and strip less than JavaScript's: `Élodie@…` would be filled under a value no
 * lookup asks for), a page of users at a time.
 */
function verifiedContacts(backend: StoreBackend): Migration {
  const columns = ['verifiedEmail', 'verifiedPhone']
  return {
    async up(db: Kysely<unknown>) {
      for (const column of columns)
        await db.schema.alterTable('users').addColumn(column, backend.textType).execute()
      for (let after = ''; ; ) {
        const page = (
          await sql<{ id: string; data: string }>`select id, data from users where id > ${after}
            order by id limit 500`.execute(db)
        ).rows
        for (const { id, data } of page) {
          const user = JSON.parse(data) as UserRow
          const email = verifiedContactOf(user, 'email')
          const phone = verifiedContactOf(user, 'phone')
          if (email !== undefined || phone !== undefined)
            await sql`update users set ${sql.ref('verifiedEmail')} = ${email ?? null},
              ${sql.ref('verifiedPhone')} = ${phone ?? null} where id = ${id}`.execute(db)
        }
        if (page.length < 500) break
        after = page.at(-1)!.id
      }
      for (const column of columns)
        await db.schema.createIndex(`users_${column}`).on('users').column(column).execute()
    },
    async down(db: Kysely<unknown>) {
      for (const column of columns) {
        await db.schema.dropIndex(`users_${column}`).execute()
        await db.schema.alterTable('users').dropColumn(column).execute()
      }
    },
  }
}

/**
 * Plugin rows swept by when they go stale (`PluginRow.staleAt`, derived as the store writes a
 * row), through an index on (kind, staleAt): the OTP wing's sweep reads the stale codes and
 * rate-limit entries a page at a time, where it read every row of the kind in each sweep. Filled
 * for the rows written before, by the rules the OTP wing writes them with (a code 10 minutes after
 * it expired, its encryption target when it expired, a rate-limit entry an hour after its last
 * event), a page at a time; rows of other kinds are never swept.
 */
function pluginRowSweeps(backend: StoreBackend): Migration {
  const staleAtOf = (row: { kind?: string; updatedAt?: number; data?: { expiresAtMs?: number } }) =>
    row.kind === 'otp'
      ? (row.data?.expiresAtMs ?? 0) + 600_000
      : row.kind === 'otp-target'
        ? (row.data?.expiresAtMs ?? 0)
        : row.kind === 'otp-limit'
          ? (row.updatedAt ?? 0) + 3_600_000
          : undefined
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('pluginRows').addColumn('staleAt', backend.textType).execute()
      for (let after = ''; ; ) {
        const page = (
          await sql<{ id: string; data: string }>`select id, data from ${sql.table('pluginRows')}
            where id > ${after} and kind in ('otp', 'otp-target', 'otp-limit') order by id limit 500`.execute(
            db,
          )
        ).rows
        for (const { id, data } of page) {
          const staleAt = staleAtOf(JSON.parse(data))
          if (staleAt !== undefined)
            await sql`update ${sql.table('pluginRows')} set ${sql.ref('staleAt')} = ${staleAtKey(staleAt)}
              where id = ${id}`.execute(db)
        }
        if (page.length < 500) break
        after = page.at(-1)!.id
      }
      await db.schema
        .createIndex('pluginRows_kind_staleAt')
        .on('pluginRows')
        .columns(['kind', 'staleAt'])
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('pluginRows_kind_staleAt').execute()
      await db.schema.alterTable('pluginRows').dropColumn('staleAt').execute()
    },
  }
}

/**
 * Pending jobs by kind (`JobRow.pendingKind`, derived as the store writes a row), through an index
 * on (pendingKind, runAfter): a worker whose in-order read of the pending jobs is filled by jobs it
 * cannot start reads the earliest due jobs of each kind it can, where it read every pending job.
 * Filled for the pending jobs written before.
 */
function pendingJobsByKind(backend: StoreBackend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('jobs').addColumn('pendingKind', backend.textType).execute()
      await sql`update ${sql.table('jobs')} set ${sql.ref('pendingKind')} = ${sql.ref('kind')}
        where ${sql.ref('state')} = 'pending'`.execute(db)
      await db.schema
        .createIndex('jobs_pendingKind_runAfter')
        .on('jobs')
        .columns(['pendingKind', 'runAfter'])
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('jobs_pendingKind_runAfter').execute()
      await db.schema.alterTable('jobs').dropColumn('pendingKind').execute()
    },
  }
}

/**
 * Gives the API keys written before sessions recorded their origin (`ApiKeyRow.origin`) the one
 * they descend from, where it is known, and ends the sessions whose opener is unknown. The
 * credential types as they were when this shipped (a migration is never edited):
 *
 * - a session a one-time token opened (an e-mail or SMS code, an OIDC token: OTP, OAuth and
 *   e-mail-auth keys) descends from nothing a user can remove: it gets the empty origin and lives on;
 * - a read-write session (`stamp_login`: a passkey's, a key's, or a refresh of any session) and a
 *   legacy login key record nothing of their opener, so a session a lost device opened before its
 *   passkey was removed would live on, renewing itself: they end, and their users sign in again;
 * - a key registered with a lifetime in the activity that created its user (a sign-up's first
 *   session key, the same `createdAt`) gets the passkeys registered with it, as a sign-up does
 *   since (`firstSessionOrigin`), or the empty origin when there were none.
 *
 * Other keys (lifelong ones, a key with a lifetime added later) are registered keys: unchanged.
 */
function sessionOrigins(): Migration {
  const spentToken = new Set([
    'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256',
    'CREDENTIAL_TYPE_OAUTH_KEY_P256',
    'CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256',
  ])
  const openerUnknown = new Set(['CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256', 'CREDENTIAL_TYPE_LOGIN'])
  type Key = {
    userId?: string
    credentialType?: string
    expirationSeconds?: string
    origin?: unknown
    createdAt?: number
  }
  return {
    async up(db: Kysely<unknown>) {
      /** When `userId` was created, and its passkeys' ids and creation times. */
      const userOf = async (userId: string) => {
        const [user] = (
          await sql<{ data: string }>`select data from ${sql.table('users')} where id = ${userId}`.execute(db)
        ).rows
        const passkeys = (
          await sql<{ id: string; data: string }>`select id, data from ${sql.table('authenticators')}
            where ${sql.ref('userId')} = ${userId} order by id`.execute(db)
        ).rows.map(({ id, data }) => ({
          id,
          createdAt: (JSON.parse(data) as { createdAt?: number }).createdAt,
        }))
        return { createdAt: user && (JSON.parse(user.data) as { createdAt?: number }).createdAt, passkeys }
      }
      const rewrite = (id: string, key: Key, origin: { authenticatorIds?: string[] }) =>
        sql`update ${sql.table('apiKeys')} set data = ${JSON.stringify({ ...key, origin })}
          where id = ${id}`.execute(db)
      for (let after = ''; ; ) {
        const page = (
          await sql<{ id: string; data: string }>`select id, data from ${sql.table('apiKeys')}
            where id > ${after} order by id limit 500`.execute(db)
        ).rows
        for (const { id, data } of page) {
          const key = JSON.parse(data) as Key
          const type = key.credentialType ?? ''
          if (key.origin !== undefined) continue
          if (openerUnknown.has(type))
            await sql`delete from ${sql.table('apiKeys')} where id = ${id}`.execute(db)
          else if (spentToken.has(type)) await rewrite(id, key, {})
          else if (key.expirationSeconds !== undefined && key.userId !== undefined) {
            const user = await userOf(key.userId)
            if (user.createdAt === undefined || user.createdAt !== key.createdAt) continue
            const passkeys = user.passkeys.filter((passkey) => passkey.createdAt === user.createdAt)
            await rewrite(id, key, passkeys.length > 0 ? { authenticatorIds: passkeys.map((p) => p.id) } : {})
          }
        }
        if (page.length < 500) break
        after = page.at(-1)!.id
      }
    },
    // The sessions it ended stay ended; the origins it gave are what the version after it writes.
    async down() {},
  }
}

/**
 * Where the service first saw each passkey (kernel/passkeySightings.ts), for the passkeys it saw
 * before it kept these rows: every passkey row's credential id and public key, and every one an
 * activity's record shows in a registration (waiting, failed, completed, or since removed). They
 * name no activity (''), so no registration made after this counts as the first of one of them.
 * The parameters that showed passkeys when this version shipped, by activity path.
 */
const PASSKEY_PARAMETERS_0025: Record<string, readonly string[]> = {
  create_authenticators: ['authenticators[]'],
  create_users: ['users[].authenticators[]'],
  create_sub_organization: ['rootUsers[].authenticators[]'],
  latchkey_import_user: ['passkeys[]'],
}

function passkeySightings(backend: StoreBackend): Migration {
  const tables = addTables({ passkeySightings: [] }, backend.textType)
  return {
    async up(db: Kysely<unknown>) {
      await tables.up(db)
      const now = Date.now()
      const data = JSON.stringify({ activityId: '', createdAt: now, updatedAt: now })
      const sight = async (shown: Iterable<string>) => {
        for (const mark of shown)
          await sql`insert into ${sql.table('passkeySightings')} (id, data)
            values (${passkeySightingId(mark)}, ${data}) on conflict (id) do nothing`.execute(db)
      }
      for (let after = ''; ; ) {
        const page = (
          await sql<{ id: string; data: string }>`select id, data from ${sql.table('authenticators')}
            where id > ${after} order by id limit 500`.execute(db)
        ).rows
        await sight(
          page.flatMap((row) => {
            const { credentialId, publicKeyHex } = JSON.parse(row.data) as AuthenticatorRow
            return publicKeyHex ? [credentialId, publicKeyMark(publicKeyHex)] : [credentialId]
          }),
        )
        if (page.length < 500) break
        after = page.at(-1)!.id
      }
      const paths = Object.keys(PASSKEY_PARAMETERS_0025)
      const path = jsonField(backend, 'path')
      for (let after = ''; ; ) {
        const page = (
          await sql<{ id: string; data: string }>`select id, data from ${sql.table('activities')}
            where id > ${after} and ${path} in (${sql.join(paths)}) order by id limit 500`.execute(db)
        ).rows
        for (const row of page) {
          const activity = JSON.parse(row.data) as { path: string; intent?: Record<string, unknown> }
          await sight(passkeysShownIn(activity.intent ?? {}, PASSKEY_PARAMETERS_0025[activity.path] ?? []))
        }
        if (page.length < 500) break
        after = page.at(-1)!.id
      }
    },
    down: tables.down,
  }
}

/**
 * API keys by `ApiKeyRow.registeredKey` (derived as the store writes a row): a registered key's
 * public key, marked proven or unproven, so a wallet sign-in naming the parent and the account
 * lookup by public key read the holders that may route them, through an index, never past every
 * unproven copy and login session key anyone may make holding a stranger's public key. Filled from
 * the rows' documents, a page at a time, by the rule as it was when this shipped (the registered
 * credential types, `unproven` absent meaning proven). The index is on (registeredKey, id), the
 * order holders are read in.
 */
function registeredKeys(backend: StoreBackend): Migration {
  const registered = new Set([
    'CREDENTIAL_TYPE_API_KEY_P256',
    'CREDENTIAL_TYPE_API_KEY_SECP256K1',
    'CREDENTIAL_TYPE_API_KEY_ED25519',
  ])
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('apiKeys').addColumn('registeredKey', backend.textType).execute()
      for (let after = ''; ; ) {
        const page = (
          await sql<{ id: string; data: string }>`select id, data from ${sql.table('apiKeys')}
            where id > ${after} order by id limit 500`.execute(db)
        ).rows
        for (const { id, data } of page) {
          const key = JSON.parse(data) as { publicKey: string; credentialType: string; unproven?: true }
          if (registered.has(key.credentialType))
            await sql`update ${sql.table('apiKeys')} set ${sql.ref('registeredKey')} = ${`${key.unproven ? 'unproven' : 'proven'}:${key.publicKey}`}
              where id = ${id}`.execute(db)
        }
        if (page.length < 500) break
        after = page.at(-1)!.id
      }
      // With the id: a page of holders in id order is read off the index, not sorted from every
      // row holding the key (an attacker's thousands of copies).
      await db.schema
        .createIndex('apiKeys_registeredKey_id')
        .on('apiKeys')
        .columns(['registeredKey', 'id'])
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('apiKeys_registeredKey_id').execute()
      await db.schema.alterTable('apiKeys').dropColumn('registeredKey').execute()
    },
  }
}

/**
 * What waits on a webhook endpoint by source organization (`WebhookDeliveryRow.waitingFrom`, the
 * endpoint's id, a space and the organization's, derived as the store writes a row), through an
 * index on (waitingFrom, queueKey): a full backlog counts one source's waiting deliveries and
 * reads its oldest (webhooks/capBacklog.ts). Filled for the deliveries waiting now.
 */
function webhookWaitingSources(backend: StoreBackend): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('webhookDeliveries').addColumn('waitingFrom', backend.textType).execute()
      await sql`update ${sql.table('webhookDeliveries')}
        set ${sql.ref('waitingFrom')} = ${sql.ref('waitingFor')} || ' ' || ${jsonField(backend, 'organizationId')}
        where ${sql.ref('waitingFor')} is not null`.execute(db)
      await db.schema
        .createIndex('webhookDeliveries_waitingFrom_queueKey')
        .on('webhookDeliveries')
        .columns(['waitingFrom', 'queueKey'])
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('webhookDeliveries_waitingFrom_queueKey').execute()
      await db.schema.alterTable('webhookDeliveries').dropColumn('waitingFrom').execute()
    },
  }
}

/**
 * API keys by the session profile they were issued under (`ApiKeyRow.sessionProfileId`), through
 * an index: deleting a profile ends its sessions (`latchkey_delete_session_profile`, in every
 * sub-organization when the profile is an app's), reading the profile's keys, never every key of
 * the organization tree. Filled from the documents of the keys that have one (login keys issued
 * under a profile: no other row is rewritten).
 */
function sessionProfileKeys(backend: StoreBackend): Migration {
  const field = jsonField(backend, 'sessionProfileId')
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('apiKeys').addColumn('sessionProfileId', backend.textType).execute()
      await sql`update ${sql.table('apiKeys')} set ${sql.ref('sessionProfileId')} = ${field}
        where ${field} is not null`.execute(db)
      await db.schema
        .createIndex('apiKeys_sessionProfileId')
        .on('apiKeys')
        .column('sessionProfileId')
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('apiKeys_sessionProfileId').execute()
      await db.schema.alterTable('apiKeys').dropColumn('sessionProfileId').execute()
    },
  }
}

/** The migrations, with the column types of `backend`, by name in the order they apply. */
function migrationsOf(backend: StoreBackend): Record<string, Migration> {
  return {
    '0001_initial': v1(backend.textType),
    '0002_jobs': addTables({ jobs: JOBS_COLUMNS }, backend.textType),
    '0003_keyring': keyring(backend.textType),
    '0004_sending': addTables(SENDING_TABLES, backend.textType),
    '0005_rate_limit_buckets': rateLimitBuckets(backend.textType),
    // A worker reads the due jobs of a kind it can start past a front of jobs it cannot.
    '0023_pending_jobs_by_kind': pendingJobsByKind(backend),
    // An organization's open sends, and an open send by its transaction, through indexes.
    '0020_open_sends': openSendLookups(backend),
    // Sessions issued before they recorded what opened them get it where it is known (a one-time
    // token: nothing; a sign-up's first session key: its passkeys); stamp_login's own end.
    '0024_session_origins': sessionOrigins(),
    // Where each passkey was first shown: a registration of one shown before is a possible copy.
    '0025_passkey_sightings': passkeySightings(backend),
    // A key's registered holders, proven apart from unproven, through an index: a wallet sign-in
    // and the account lookup by public key read no copy anyone else registered before them.
    '0026_registered_keys': registeredKeys(backend),
    // ---- wing: spending limits (issue 37) ----
    '0006_spending_limits': spendingLimitTables(backend),
    // Session profiles (limits/): a login naming one issues a session its scope confines.
    '0010_session_profiles': addTables({ sessionProfiles: ['organizationId'] }, backend.textType),
    // A profile's session keys through an index: deleting the profile ends them.
    '0028_session_profile_keys': sessionProfileKeys(backend),
    // Usage rows rewritten by every limited signing, never compressed below 8 KB (PostgreSQL).
    '0017_spending_usage_uncompressed': spendingUsageUncompressed(backend),
    // ---- wing: MFA (issue 38) ----
    // MFA (mfa/): policies per user, TOTP factors, recovery codes, held activities' challenges.
    '0007_mfa': addTables(
      {
        mfaPolicies: ['organizationId', 'userId'],
        mfaFactors: ['userId'],
        mfaRecoveryCodes: ['userId', 'hash'],
        mfaChallenges: [],
      },
      backend.textType,
    ),
    // ---- wing: webhooks (issue 39) ----
    '0008_webhooks': addTables(
      { webhookEndpoints: ['organizationId'], webhookDeliveries: ['eventId', 'endpointId', 'state'] },
      backend.textType,
    ),
    '0014_webhook_delivery_queue': webhookDeliveryQueue(backend),
    '0015_webhook_events': webhookEvents(backend.textType),
    '0016_api_key_lookup': apiKeyLookup(backend.textType),
    // list_suborgs's filters through indexes: organizations by name, users by user name, passkeys by public key.
    '0019_account_lookups': accountLookups(backend),
    // Users by their verified contacts: lookups read no unverified copy of an address.
    '0021_verified_contacts': verifiedContacts(backend),
    // OTP codes and rate-limit entries swept through an index, the stale ones only.
    '0022_plugin_row_sweeps': pluginRowSweeps(backend),
    // A full backlog drops from the source organization holding the most of it.
    '0027_webhook_waiting_sources': webhookWaitingSources(backend),
    // ---- wing: import and pregeneration (issue 40) ----
    '0009_import': addTables(
      { importedUsers: ['organizationId'], importClaims: [], importKeys: [] },
      backend.textType,
    ),
    '0011_import_contacts': importContacts(backend),
    // Each bundle encrypted to an import key opens once: a row per bundle opened, its id derived.
    '0018_import_spent_bundles': addTables({ importSpentBundles: [] }, backend.textType),
  }
}

/** The migrations, with the column types of `backend`. */
export function migrations(backend: StoreBackend): MigrationProvider {
  return { getMigrations: async () => migrationsOf(backend) }
}

/** Kysely's record of the migrations applied to a database. */
const MIGRATION_TABLE = 'kysely_migration'

/** The names of the migrations this version knows, in order. */
export function knownMigrations(backend: StoreBackend): string[] {
  // By name, the order Kysely applies them in (each wing's entry sits below its own line).
  return Object.keys(migrationsOf(backend)).sort()
}

/** The migrations applied to `db`, by name (none on an empty database). */
export async function appliedMigrations(db: Kysely<unknown>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (!tables.some((table) => table.name === MIGRATION_TABLE)) return []
  return recordedMigrations(db)
}

/**
 * The migrations recorded in the migrations table, which an open store's database has: one plain
 * query (readiness probes ask it every second).
 */
export async function recordedMigrations(db: Kysely<unknown>): Promise<string[]> {
  const rows = await sql<{
    name: string
  }>`select name from ${sql.table(MIGRATION_TABLE)} order by name`.execute(db)
  return rows.rows.map((row) => row.name)
}

/** The database was migrated by a newer version of the service: this one does not serve it. */
export class DatabaseAheadError extends ServiceError {
  override name = 'DatabaseAheadError'
  constructor(
    readonly database: string,
    readonly unknown: string[],
  ) {
    super(
      `this ${database} database was migrated by a newer latchkey-service (migration${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} unknown to this version); nothing was changed. ` +
        'Run the version that migrated it, or restore a backup taken before the upgrade',
    )
  }
}

/** The database is behind this version and migrations were not to run (`migrate: false`). */
export class MigrationsPendingError extends ServiceError {
  override name = 'MigrationsPendingError'
  constructor(
    readonly database: string,
    readonly pending: string[],
  ) {
    super(
      `this ${database} database is behind this version of latchkey-service: migration${pending.length > 1 ? 's' : ''} ${pending.join(', ')} pending; nothing was changed. ` +
        'Run `latchkey-service migrate` with the same --data-dir or --database-url first',
    )
  }
}

export interface MigrateOptions {
  /**
   * Applies the pending migrations; when false, a database that is behind is refused
   * (`MigrationsPendingError`), untouched, so that migrations run as their own deployment step.
   * @default true
   */
  migrate?: boolean
}

/**
 * Brings the schema of `db` to this version's latest and returns the migrations it applied (none
 * when it was current). A database migrated ahead of this version (a migration it does not know)
 * is refused before anything runs (`DatabaseAheadError`).
 */
export async function migrateSchema(
  db: Kysely<unknown>,
  backend: StoreBackend,
  options: MigrateOptions = {},
): Promise<string[]> {
  const known = knownMigrations(backend)
  let applied: string[]
  try {
    applied = await appliedMigrations(db)
  } catch (error) {
    if (classify(backend, error) === 'unavailable') throw unreachable(error)
    throw error
  }
  const unknown = applied.filter((name) => !known.includes(name))
  if (unknown.length > 0) throw new DatabaseAheadError(backend.name, unknown)
  const pending = known.filter((name) => !applied.includes(name))
  if (pending.length === 0) return []
  if (options.migrate === false) throw new MigrationsPendingError(backend.name, pending)
  const migrator = new Migrator({ db, provider: migrations(backend) })
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest()
    if (!error)
      return (results ?? []).filter((result) => result.status === 'Success').map((r) => r.migrationName)
    const kind = classify(backend, error)
    // Two instances creating the migration tables at once: the loser retries.
    if (attempt < 5 && (kind === 'retry' || kind === 'unique')) continue
    if (kind === 'unavailable') throw unreachable(error)
    throw error
  }
}
