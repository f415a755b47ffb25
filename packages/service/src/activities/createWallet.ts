import { readAccounts, readMnemonicLength } from '../domain/params.ts'
import { createWalletRecords } from '../domain/wallets.ts'
import { defineActivity } from '../registry.ts'

/** A new BIP-39 wallet in the organization, with its first accounts. */
export const createWallet = defineActivity('create_wallet', {
  parse: (r) => ({
    walletName: r.string('walletName', { max: 256 }),
    accounts: readAccounts(r),
    mnemonicLength: readMnemonicLength(r),
  }),
  run: (ctx, p) =>
    createWalletRecords(ctx, {
      organizationId: ctx.organization.id,
      walletName: p.walletName,
      accounts: p.accounts,
      mnemonicLength: p.mnemonicLength,
      field: 'parameters.accounts',
    }),
})
