import { readAccounts, readMnemonicLength } from '../domain/params.ts'
import { checkResourceLimit, farFromLimit } from '../domain/resourceLimits.ts'
import { createWalletRecords } from '../domain/wallets.ts'
import type { NewWalletResult } from '../kernel/crypto/index.ts'
import { defineActivity } from '../kernel/registry.ts'

interface Precomputed {
  wallet: NewWalletResult | undefined
  /** The organization's wallets and wallet accounts, counted (committed) before the transaction. */
  held: { wallets: number; accounts: number } | undefined
}

/** A new BIP-39 wallet in the organization, with its first accounts. */
export const createWallet = defineActivity('create_wallet', {
  parse: (r) => ({
    walletName: r.string('walletName', { max: 256 }),
    accounts: readAccounts(r),
    mnemonicLength: readMnemonicLength(r),
  }),
  // A new wallet and its accounts are rows of its own: no SERIALIZABLE transaction needed.
  createsOnly: true,
  // Mnemonic, seed, derivation and sealing (milliseconds of CPU) run before the transaction, and
  // the organization's wallets and accounts are counted meanwhile (two count statements).
  precompute: async (ctx, p): Promise<Precomputed> => {
    const [wallet, held] = await Promise.all([
      ctx.runtime.crypto
        .run({ kind: 'newWallet', mnemonicLength: p.mnemonicLength ?? 12, accounts: p.accounts })
        .catch(() => undefined),
      Promise.all([
        ctx.reads.count('wallets', 'organizationId', ctx.organization.id),
        ctx.reads.count('walletAccounts', 'organizationId', ctx.organization.id),
      ]).then(
        ([wallets, accounts]) => ({ wallets, accounts }),
        () => undefined,
      ),
    ])
    return { wallet, held }
  },
  run: async (ctx, p) => {
    const precomputed = ctx.precomputed as Precomputed | undefined
    const early = precomputed?.wallet
    // Far from the caps when counted before: no count here, so the run stays a snapshot run. Near
    // them (or not counted: a run through consensus), counted in the transaction, which a
    // snapshot run cannot do: it runs again as a SERIALIZABLE transaction.
    const held = precomputed?.held
    if (!held || !farFromLimit('walletsPerOrganization', held.wallets, 1))
      await checkResourceLimit(ctx.tx, 'walletsPerOrganization', {
        owner: ctx.organization.id,
        adding: 1,
        field: 'parameters.walletName',
      })
    if (!held || !farFromLimit('walletAccountsPerOrganization', held.accounts, p.accounts.length))
      await checkResourceLimit(ctx.tx, 'walletAccountsPerOrganization', {
        owner: ctx.organization.id,
        adding: p.accounts.length,
        field: 'parameters.accounts',
      })
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
