import { utf8ToBytes } from '@noble/hashes/utils.js'
import { exportSecret } from '../domain/secretBundles.ts'
import { findWallet } from '../domain/wallets.ts'
import { defineActivity } from '../kernel/registry.ts'

/** A wallet's mnemonic, HPKE-sealed to the client's target key in a signed envelope. */
export const exportWallet = defineActivity('export_wallet', {
  parse: (r) => ({
    walletId: r.string('walletId', { max: 200 }),
    targetPublicKey: r.string('targetPublicKey', { max: 200 }),
  }),
  run: async (ctx, p) => {
    const wallet = await findWallet(ctx.tx, ctx.organization.id, p.walletId, 'parameters.walletId')
    const exportBundle = exportSecret(
      ctx,
      utf8ToBytes(ctx.runtime.openText(wallet.sealedMnemonic)),
      p.targetPublicKey,
    )
    await ctx.tx.put('wallets', { ...wallet, exported: true, updatedAt: ctx.now })
    return { walletId: wallet.id, exportBundle }
  },
})
