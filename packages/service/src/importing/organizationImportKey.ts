import type { ImportBundleData } from '@latchkey/protocol'

/**
 * The purpose signed into the bundle of the organization's import key (`latchkey_init_user_import`)
 * and into no other. Every import bundle the signer key signs names an organization, a user and a
 * key, so without it a user's own target (`init_import_wallet`, `init_import_private_key`), which
 * opens into that user's organization, would pass for the import key, whose secrets open only into
 * the new accounts of `latchkey_import_user`. `latchkey-service import` requires it; the kit's
 * `importWallet` and the secret frame refuse a bundle that carries any purpose.
 */
export const ORGANIZATION_IMPORT_KEY_PURPOSE = 'organization_import_key' satisfies ImportBundleData['purpose']

/** The signed data of the organization import key's bundle. */
export interface OrganizationImportBundleData extends ImportBundleData {
  purpose: typeof ORGANIZATION_IMPORT_KEY_PURPOSE
}
