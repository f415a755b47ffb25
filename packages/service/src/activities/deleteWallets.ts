import { findWallet } from '../domain/wallets.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { ConflictError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'

/** Deletes wallets and their accounts; a never-exported wallet needs `deleteWithoutExport`. */
export const deleteWallets = defineActivity('delete_wallets', {
  parse: (r) => {
    const deleteWithoutExport = r.optBool('deleteWithoutExport')
    return {
      walletIds: r.ids('walletIds', { min: 1 }),
      ...(deleteWithoutExport !== undefined ? { deleteWithoutExport } : {}),
    }
  },
  run: async (ctx, p) => {
    await mapInOrder(p.walletIds, async (walletId, index) => {
      const field = `parameters.walletIds[${index}]`
      const wallet = await findWallet(ctx.tx, ctx.organization.id, walletId, field)
      if (!wallet.exported && !p.deleteWithoutExport)
        throw new ConflictError({
          code: 'WALLET_NOT_EXPORTED',
          field,
          message: `wallet ${walletId} was never exported; export it first or set deleteWithoutExport`,
        })
      for (const account of await ctx.tx.findBy('walletAccounts', 'walletId', walletId))
        await ctx.tx.delete('walletAccounts', account.id)
      await ctx.tx.delete('wallets', walletId)
    })
    return { walletIds: p.walletIds }
  },
})
