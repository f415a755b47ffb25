import { CURVES } from '@latchkey/protocol'
import { CryptoInputError, openImportCiphertext } from '../crypto/index.ts'
import { readAddressFormats, storePrivateKey } from '../domain/privateKeys.ts'
import { findUser } from '../domain/users.ts'
import { ApiError } from '../errors.ts'
import { defineActivity } from '../registry.ts'

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
  run: async (ctx, p) => {
    const user = findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    const target = ctx.tx.findBy('importTargets', 'userId', user.id).at(-1)
    if (!target)
      throw new ApiError(
        'BUNDLE_INVALID',
        `no import in progress for user ${user.id}; call init_import_private_key first`,
        'parameters.encryptedBundle',
      )
    const targetPrivateKey = ctx.service.open(target.sealedTargetPrivateKey)
    let privateKey: Uint8Array
    try {
      privateKey = await openImportCiphertext({ encryptedBundle: p.encryptedBundle, targetPrivateKey })
    } catch (error) {
      throw new ApiError(
        'BUNDLE_INVALID',
        error instanceof CryptoInputError ? error.message : 'encryptedBundle cannot be decrypted',
        'parameters.encryptedBundle',
      )
    } finally {
      targetPrivateKey.fill(0)
    }
    try {
      ctx.tx.delete('importTargets', target.id)
      const row = storePrivateKey(
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
