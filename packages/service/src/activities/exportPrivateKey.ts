import { findPrivateKey } from '../domain/privateKeys.ts'
import { exportSecret } from '../domain/secretBundles.ts'
import { defineActivity } from '../kernel/registry.ts'

/** A private key, HPKE-sealed to the client's target key in a signed envelope (as export_wallet_account). */
export const exportPrivateKey = defineActivity('export_private_key', {
  parse: (r) => ({
    privateKeyId: r.string('privateKeyId', { max: 200 }),
    targetPublicKey: r.string('targetPublicKey', { max: 200 }),
  }),
  run: async (ctx, p) => {
    const row = await findPrivateKey(ctx.tx, ctx.organization.id, p.privateKeyId, 'parameters.privateKeyId')
    const exportBundle = exportSecret(ctx, ctx.runtime.open(row.sealedPrivateKey), p.targetPublicKey)
    await ctx.tx.put('privateKeys', { ...row, exported: true, updatedAt: ctx.now })
    return { privateKeyId: row.id, exportBundle }
  },
})
