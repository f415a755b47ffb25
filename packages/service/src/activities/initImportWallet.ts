import { bytesToHex } from '@noble/hashes/utils.js'
import { importingUser } from '../domain/secretBundles.ts'
import { makeImportBundle, p256PublicKey, randomP256PrivateKey } from '../kernel/crypto/index.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * A fresh target key for importing a wallet: its public half goes to the client in a signed
 * import bundle, its private half is sealed until `import_wallet` uses it (once). The user is the
 * caller (a root user may name another: `importingUser`); a new target replaces their pending one.
 */
export const initImportWallet = defineActivity('init_import_wallet', {
  parse: (r) => ({ userId: r.string('userId', { max: 200 }) }),
  run: async (ctx, p) => {
    const user = await importingUser(ctx, p.userId)
    for (const previous of await ctx.tx.findBy('importTargets', 'userId', user.id))
      await ctx.tx.delete('importTargets', previous.id)
    const targetPrivateKey = randomP256PrivateKey()
    const targetPublic = p256PublicKey(targetPrivateKey, false)
    await ctx.tx.put('importTargets', {
      id: ctx.newId(),
      organizationId: ctx.organization.id,
      userId: user.id,
      sealedTargetPrivateKey: ctx.runtime.seal(targetPrivateKey),
      targetPublic: bytesToHex(targetPublic),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    targetPrivateKey.fill(0)
    const signerPrivateKey = ctx.runtime.signerPrivateKey()
    try {
      const importBundle = makeImportBundle({
        organizationId: ctx.organization.id,
        userId: user.id,
        targetPublic,
        signerPrivateKey,
      })
      return { importBundle }
    } finally {
      signerPrivateKey.fill(0)
    }
  },
})
