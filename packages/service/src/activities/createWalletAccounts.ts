import { readAccounts } from '../domain/params.ts'
import { checkResourceLimit } from '../domain/resourceLimits.ts'
import { deriveAccounts, findWallet } from '../domain/wallets.ts'
import { defineActivity } from '../kernel/registry.ts'

/** Further accounts of an existing wallet; with `persist: false` it only derives the addresses. */
export const createWalletAccounts = defineActivity('create_wallet_accounts', {
  parse: (r) => ({
    walletId: r.string('walletId', { max: 200 }),
    accounts: readAccounts(r, 'accounts', 1),
    persist: r.optBool('persist') ?? true,
  }),
  run: async (ctx, p) => {
    const wallet = await findWallet(ctx.tx, ctx.organization.id, p.walletId, 'parameters.walletId')
    if (p.persist !== false)
      await checkResourceLimit(ctx.tx, 'walletAccountsPerOrganization', {
        owner: ctx.organization.id,
        adding: p.accounts.length,
        field: 'parameters.accounts',
      })
    const addresses = await deriveAccounts(ctx, wallet, p.accounts, {
      persist: p.persist !== false,
      field: 'parameters.accounts',
    })
    if (p.persist !== false) await ctx.tx.put('wallets', { ...wallet, updatedAt: ctx.now })
    return { addresses }
  },
})
