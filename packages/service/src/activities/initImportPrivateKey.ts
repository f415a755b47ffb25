import { defineActivity } from '../kernel/registry.ts'
import { initImportWallet } from './initImportWallet.ts'

/** The same signed import target as `init_import_wallet` (one pending import per user). */
export const initImportPrivateKey = defineActivity('init_import_private_key', {
  parse: initImportWallet.parse,
  run: initImportWallet.run,
})
