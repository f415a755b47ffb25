import { CURVES } from '@latchkey/protocol'
import { readAddressFormats, storePrivateKey } from '../domain/privateKeys.ts'
import { checkResourceLimit } from '../domain/resourceLimits.ts'
import { importingUser, openImportedSecret } from '../domain/secretBundles.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * A private key the client encrypted (`encryptPrivateKeyToBundle`: 32 raw bytes) to the target of
 * `init_import_private_key`; the target is used once.
 */
export const importPrivateKey = defineActivity('import_private_key', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    privateKeyName: r.string('privateKeyName', { max: 256 }),
    encryptedBundle: r.string('encryptedBundle', { max: 16 * 1024 }),
    curve: r.enum('curve', CURVES),
    addressFormats: readAddressFormats(r),
  }),
  // Once it has ended, its record keeps no ciphertext it no longer needs (`clearedWhenDone`).
  clearedWhenDone: ['encryptedBundle'],
  run: async (ctx, p) => {
    const user = await importingUser(ctx, p.userId)
    // Counted as create_private_keys counts them, before the bundle is opened.
    await checkResourceLimit(ctx.tx, 'privateKeysPerOrganization', {
      owner: ctx.organization.id,
      adding: 1,
      field: 'parameters.privateKeyName',
    })
    const privateKey = await openImportedSecret(ctx, user, p.encryptedBundle, 'init_import_private_key')
    try {
      const row = await storePrivateKey(
        ctx,
        {
          privateKeyName: p.privateKeyName,
          curve: p.curve,
          addressFormats: p.addressFormats,
          privateKeyTags: [],
          privateKey,
          imported: true,
        },
        'parameters',
      )
      return { privateKeyId: row.id, addresses: row.addresses }
    } finally {
      privateKey.fill(0)
    }
  },
})
