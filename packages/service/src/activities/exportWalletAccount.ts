import { withField } from '../domain/params.ts'
import { findAccount, withAccountKey } from '../domain/wallets.ts'
import { makeExportBundle } from '../kernel/crypto/index.ts'
import { defineActivity } from '../kernel/registry.ts'

/** An account's raw private key, HPKE-sealed to the client's target key in a signed envelope. */
export const exportWalletAccount = defineActivity('export_wallet_account', {
  parse: (r) => ({
    address: r.string('address', { max: 200 }),
    targetPublicKey: r.string('targetPublicKey', { max: 200 }),
  }),
  run: async (ctx, p) => {
    const account = await findAccount(ctx.tx, ctx.organization.id, p.address, 'parameters.address')
    const signerPrivateKey = ctx.runtime.signerPrivateKey()
    try {
      const exportBundle = withAccountKey(ctx.runtime, account, (privateKey) =>
        withField('parameters', () =>
          makeExportBundle({
            plaintext: privateKey,
            targetPublicKey: p.targetPublicKey,
            organizationId: ctx.organization.id,
            signerPrivateKey,
          }),
        ),
      )
      const wallet = (await ctx.tx.get('wallets', account.walletId))!
      await ctx.tx.put('wallets', { ...wallet, exported: true, updatedAt: ctx.now })
      return { address: account.address, exportBundle }
    } finally {
      signerPrivateKey.fill(0)
    }
  },
})
