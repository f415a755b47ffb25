// `init_import_wallet`, `init_import_private_key`, `import_wallet` and `import_private_key` act on
// the import target of `parameters.userId`: a user a policy lets import names only themself (as
// the published clients do: the session's own user id); a root user may name any user of the
// organization.

import { hpkeSeal } from '@latchkey/protocol/hpke'
import { hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { openSignedBundle } from '../kernel/crypto/index.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Reply,
  resultOf,
  testKey,
} from '../testing/harness.ts'

const ABANDON =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'

const errorOf = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})

/** A non-root user of the dev organization whom a policy lets import wallets and keys. */
async function importer(h: Harness) {
  const key = testKey()
  const { userIds } = resultOf(
    'create_users',
    await h.submit('create_users', {
      users: [
        {
          userName: 'importer',
          apiKeys: [key.apiKey('k')],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    }),
  )
  resultOf(
    'create_policy',
    await h.submit('create_policy', {
      policyName: 'may import',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'IMPORT'",
      notes: '',
    }),
  )
  return { userId: userIds[0] as string, as: { as: key } }
}

/** The mnemonic sealed to the target of an `init_import_wallet` answer. */
function sealTo(h: Harness, reply: Reply): string {
  const { targetPublic } = openSignedBundle<{ targetPublic: string }>(
    resultOf('init_import_wallet', reply).importBundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  return JSON.stringify(
    hpkeSeal({ plaintext: new TextEncoder().encode(ABANDON), receiverPublicKey: hexToBytes(targetPublic) }),
  )
}

describe('import targets belong to the caller, unless a root user names another user', () => {
  it('a user with an IMPORT policy can neither replace nor spend another user’s pending target', async () => {
    const h = await createHarness()
    const rootUserId = h.service.dev.userId
    const user = await importer(h)
    // The root user's import is under way: a target is pending.
    const rootInit = await h.submit('init_import_wallet', { userId: rootUserId })
    const rootBundle = sealTo(h, rootInit)
    const denied = { status: 403, errorCode: 'PERMISSION_DENIED', field: 'parameters.userId' }
    h.clock.advance(1000)
    expect(errorOf(await h.submit('init_import_wallet', { userId: rootUserId }, user.as))).toEqual(denied)
    expect(errorOf(await h.submit('init_import_private_key', { userId: rootUserId }, user.as))).toEqual(
      denied,
    )
    // Nor for a user that does not exist: refused before the look-up, which would tell.
    expect(errorOf(await h.submit('init_import_wallet', { userId: 'nobody' }, user.as))).toEqual(denied)
    const wallet = { walletName: 'W', encryptedBundle: rootBundle, accounts: [ETHEREUM_ACCOUNT] }
    expect(errorOf(await h.submit('import_wallet', { userId: rootUserId, ...wallet }, user.as))).toEqual(
      denied,
    )
    expect(
      errorOf(
        await h.submit(
          'import_private_key',
          {
            userId: rootUserId,
            privateKeyName: 'k',
            encryptedBundle: rootBundle,
            curve: 'CURVE_SECP256K1',
            addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
          },
          user.as,
        ),
      ),
    ).toEqual(denied)
    // The root user's pending target survived all of it: their import goes through.
    expect(
      resultOf('import_wallet', await h.submit('import_wallet', { userId: rootUserId, ...wallet })).addresses,
    ).toEqual(['0x9858EfFD232B4033E47d90003D41EC34EcaEda94'])

    // Their own import works, and a root user may still import for them.
    h.clock.advance(1000)
    const own = await h.submit('init_import_wallet', { userId: user.userId }, user.as)
    const imported = await h.submit(
      'import_wallet',
      {
        userId: user.userId,
        walletName: 'Mine',
        encryptedBundle: sealTo(h, own),
        accounts: [ETHEREUM_ACCOUNT],
      },
      user.as,
    )
    expect(resultOf('import_wallet', imported).walletId).toEqual(expect.any(String))
    h.clock.advance(1000)
    expect((await h.submit('init_import_wallet', { userId: user.userId })).status).toBe(200)
  })
})
