import { z } from 'zod'

export const storageSection = z
  .strictObject({
    database_url: z
      .string({ error: 'must be a PostgreSQL URL (a string)' })
      .regex(/^postgres(ql)?:\/\/./, {
        error: 'must be a PostgreSQL URL like postgres://user@db.internal:5432/latchkey',
      })
      .optional()
      .meta({ secret: true, env: 'LATCHKEY_DATABASE_URL' })
      .describe(
        'PostgreSQL connection URL (it may hold a password). Several instances may share one database. Exclusive with `data_dir`.',
      ),
    data_dir: z
      .string({ error: 'must be a directory path (a string)' })
      .min(1)
      .optional()
      .describe(
        'Keep data in a SQLite file in this directory (one process at a time). Exclusive with `database_url`.',
      ),
  })
  .describe('Where data lives. `start` needs one of the two: it never runs on an in-memory database.')

export type StorageSection = z.infer<typeof storageSection>

export type StorageOptions =
  | { kind: 'postgres'; databaseUrl: string }
  | { kind: 'dataDir'; dataDir: string }
  | { kind: 'none' }

export function storageOptions(parsed: StorageSection): StorageOptions {
  if (parsed.database_url !== undefined) return { kind: 'postgres', databaseUrl: parsed.database_url }
  if (parsed.data_dir !== undefined) return { kind: 'dataDir', dataDir: parsed.data_dir }
  return { kind: 'none' }
}
