import type { ServicePlugin } from '../kernel/registry.ts'
import { getImportedUsers, importUser, initUserImport } from './importActivities.ts'

/** The name the importing wing is loaded under. */
export const IMPORTING_WING = 'importing'

/**
 * The importing wing: `latchkey_init_user_import` (the organization's import key) and
 * `latchkey_import_user` (one person, idempotent by external id), which the bulk
 * `latchkey-service import` submits line by line, and the query `latchkey_get_imported_users`
 * (which external ids are done), which it asks before each hundred lines. See docs/migrate.md.
 */
export function importingWing(): ServicePlugin {
  return {
    name: IMPORTING_WING,
    activities: { latchkey_init_user_import: initUserImport, latchkey_import_user: importUser },
    queries: { latchkey_get_imported_users: getImportedUsers },
  }
}
