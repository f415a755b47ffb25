import { randomBytes } from '@noble/hashes/utils.js'
import { readPrivateKeyParams, storePrivateKey } from '../domain/privateKeys.ts'
import { checkResourceLimit } from '../domain/resourceLimits.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { defineActivity } from '../kernel/registry.ts'

/** New random private keys (secp256k1 or ed25519), sealed at rest, with an address per format. */
export const createPrivateKeys = defineActivity('create_private_keys', {
  parse: (r) => ({ privateKeys: r.array('privateKeys', readPrivateKeyParams, { min: 1, max: 10 }) }),
  run: async (ctx, p) => {
    await checkResourceLimit(ctx.tx, 'privateKeysPerOrganization', {
      owner: ctx.organization.id,
      adding: p.privateKeys.length,
      field: 'parameters.privateKeys',
    })
    return {
      privateKeys: await mapInOrder(p.privateKeys, async (params, index) => {
        const privateKey = randomBytes(32)
        try {
          const row = await storePrivateKey(
            ctx,
            { ...params, privateKey, imported: false },
            `parameters.privateKeys[${index}]`,
          )
          return { privateKeyId: row.id, addresses: row.addresses }
        } finally {
          privateKey.fill(0)
        }
      }),
    }
  },
})
