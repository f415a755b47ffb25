import { readAccounts } from '../domain/params.ts'
import { checkResourceLimit } from '../domain/resourceLimits.ts'
import { importingUser, openImportedSecret } from '../domain/secretBundles.ts'
import { createWalletRecords } from '../domain/wallets.ts'
import { FieldError } from '../kernel/base/errors.ts'
import { normalizeMnemonic, validateMnemonic } from '../kernel/crypto/index.ts'
import { defineActivity } from '../kernel/registry.ts'

/** A wallet from a mnemonic the client encrypted to the target key of `init_import_wallet`. */
export const importWallet = defineActivity('import_wallet', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    walletName: r.string('walletName', { max: 256 }),
    encryptedBundle: r.string('encryptedBundle', { max: 16 * 1024 }),
    accounts: readAccounts(r),
  }),
  // Once it has ended, its record keeps no ciphertext it no longer needs (`clearedWhenDone`).
  clearedWhenDone: ['encryptedBundle'],
  run: async (ctx, p) => {
    const user = await importingUser(ctx, p.userId)
    // Counted as create_wallet counts them, before the bundle is opened (a refusal spends nothing).
    await checkResourceLimit(ctx.tx, 'walletsPerOrganization', {
      owner: ctx.organization.id,
      adding: 1,
      field: 'parameters.walletName',
    })
    await checkResourceLimit(ctx.tx, 'walletAccountsPerOrganization', {
      owner: ctx.organization.id,
      adding: p.accounts.length,
      field: 'parameters.accounts',
    })
    const plaintext = await openImportedSecret(ctx, user, p.encryptedBundle, 'init_import_wallet')
    const mnemonic = normalizeMnemonic(new TextDecoder().decode(plaintext))
    plaintext.fill(0)
    if (!validateMnemonic(mnemonic))
      throw new FieldError({
        code: 'BUNDLE_INVALID',
        field: 'parameters.encryptedBundle',
        message: 'the decrypted bundle is not a BIP-39 mnemonic',
      })
    return createWalletRecords(ctx, {
      organizationId: ctx.organization.id,
      walletName: p.walletName,
      accounts: p.accounts,
      mnemonic,
      imported: true,
      field: 'parameters.accounts',
    })
  },
})
