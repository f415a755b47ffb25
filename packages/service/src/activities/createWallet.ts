import { readAccounts, readMnemonicLength } from '../domain/params.ts'
import { createWalletRecords } from '../domain/wallets.ts'
import type { NewWalletResult } from '../kernel/crypto/index.ts'
import { defineActivity } from '../kernel/registry.ts'

/** A new BIP-39 wallet in the organization, with its first accounts. */
export const createWallet = defineActivity('create_wallet', {
  parse: (r) => ({
    walletName: r.string('walletName', { max: 256 }),
    accounts: readAccounts(r),
    mnemonicLength: readMnemonicLength(r),
  }),
  // A new wallet and its accounts are rows of its own: no SERIALIZABLE transaction needed.
  createsOnly: true,
  // Mnemonic, seed, derivation and sealing (milliseconds of CPU) run before the transaction.
  precompute: async (ctx, p) => ({
    wallet: await ctx.runtime.crypto
      .run({ kind: 'newWallet', mnemonicLength: p.mnemonicLength ?? 12, accounts: p.accounts })
      .catch(() => undefined),
  }),
  run: async (ctx, p) => {
    const precomputed = ctx.precomputed as { wallet: NewWalletResult | undefined } | undefined
    const early = precomputed?.wallet
    return createWalletRecords(ctx, {
      organizationId: ctx.organization.id,
      walletName: p.walletName,
      accounts: p.accounts,
      mnemonicLength: p.mnemonicLength,
      field: 'parameters.accounts',
      // A job that met bad input is done again here, to fail naming the field.
      ...(early && !('error' in early) ? { sealed: early } : {}),
    })
  },
})
