import { findWallet } from '../domain/wallets.ts'
import { ApiError } from '../errors.ts'
import { defineActivity } from '../registry.ts'

/** Deletes wallets and their accounts; a never-exported wallet needs `deleteWithoutExport`. */
export const deleteWallets = defineActivity('delete_wallets', {
  parse: (r) => {
    const deleteWithoutExport = r.optBool('deleteWithoutExport')
    return {
      walletIds: r.ids('walletIds', { min: 1 }),
      ...(deleteWithoutExport !== undefined ? { deleteWithoutExport } : {}),
    }
  },
  run: (ctx, p) => {
    p.walletIds.forEach((walletId, index) => {
      const field = `parameters.walletIds[${index}]`
      const wallet = findWallet(ctx.tx, ctx.organization.id, walletId, field)
      if (!wallet.exported && !p.deleteWithoutExport)
        throw new ApiError(
          'WALLET_NOT_EXPORTED',
          `wallet ${walletId} was never exported; export it first or set deleteWithoutExport`,
          field,
        )
      for (const account of ctx.tx.findBy('walletAccounts', 'walletId', walletId))
        ctx.tx.delete('walletAccounts', account.id)
      ctx.tx.delete('wallets', walletId)
    })
    return { walletIds: p.walletIds }
  },
})
