import type { Kysely, Migration, MigrationProvider } from 'kysely'
import type { StoreBackend } from './backends/StoreBackend.ts'

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

/** The migrations, with the column types of `backend`. */
export function migrations(backend: StoreBackend): MigrationProvider {
  return {
    getMigrations: async () => ({
      '0001_initial': v1(backend.textType),
      // rate limits
      '0002_rate_limit_buckets': rateLimitBuckets(backend.textType),
    }),
  }
}
