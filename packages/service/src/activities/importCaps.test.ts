// The per-organization caps on wallets, wallet accounts and private keys (domain/resourceLimits.ts)
// hold for imports too: import_wallet and import_private_key, open to an end user in their own
// sub-organization, wrote the same rows with no count, so an end user grew their organization past
// every cap, bounded by the rate limit alone.

import { hpkeSeal } from '@latchkey/protocol/hpke'
import { hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { RESOURCE_LIMITS } from '../domain/resourceLimits.ts'
import { openSignedBundle } from '../kernel/crypto/index.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fillRows,
  type Harness,
  type Reply,
  resultOf,
  type TestKey,
} from '../testing/harness.ts'

const ABANDON =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'

function sealTo(
  h: Harness,
  reply: Reply,
  initPath: 'init_import_wallet' | 'init_import_private_key',
  plaintext: Uint8Array,
) {
  const { targetPublic } = openSignedBundle<{ targetPublic: string }>(
    resultOf(initPath, reply).importBundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  return JSON.stringify(hpkeSeal({ plaintext, receiverPublicKey: hexToBytes(targetPublic) }))
}

async function endUser(h: Harness) {
  const sub = await h.createSubOrganization()
  return {
    sub,
    userId: sub.userIds[0] as string,
    as: { as: sub.keys[0] as TestKey, organizationId: sub.organizationId },
  }
}

describe('imports are held to the organization caps', () => {
  it('import_wallet is refused in an organization at its wallet cap', async () => {
    const h = await createHarness()
    const { sub, userId, as } = await endUser(h)
    await fillRows(h, 'wallets', RESOURCE_LIMITS.walletsPerOrganization, (i) => ({
      organizationId: sub.organizationId,
      name: `filler ${i}`,
      sealedMnemonic: '',
      mnemonicLength: 12,
      exported: false,
      imported: false,
    }))
    h.clock.advance(1)
    // Control: the cap is reached, create_wallet is refused.
    const created = await h.submit('create_wallet', { walletName: 'c', accounts: [] }, as)
    expect(created.status).toBe(412)
    h.clock.advance(1)
    const init = await h.submit('init_import_wallet', { userId }, as)
    h.clock.advance(1)
    const imported = await h.submit(
      'import_wallet',
      {
        userId,
        walletName: 'past the cap',
        encryptedBundle: sealTo(h, init, 'init_import_wallet', new TextEncoder().encode(ABANDON)),
        accounts: [],
      },
      as,
    )
    expect({ status: imported.status, errorCode: imported.body.details?.errorCode }).toEqual({
      status: 412,
      errorCode: 'RESOURCE_LIMIT_REACHED',
    })
    expect(await h.service.store.count('wallets', 'organizationId', sub.organizationId)).toBe(
      RESOURCE_LIMITS.walletsPerOrganization,
    )
  }, 60_000)

  it('import_wallet is refused when its accounts would pass the wallet-account cap', async () => {
    const h = await createHarness()
    const { sub, userId, as } = await endUser(h)
    await fillRows(h, 'walletAccounts', RESOURCE_LIMITS.walletAccountsPerOrganization, (i) => ({
      organizationId: sub.organizationId,
      walletId: 'filler',
      address: `filler${i}`,
      publicKey: '',
      sealedPrivateKey: '',
      ...ETHEREUM_ACCOUNT,
    }))
    h.clock.advance(1)
    const init = await h.submit('init_import_wallet', { userId }, as)
    h.clock.advance(1)
    const accounts = Array.from({ length: 100 }, (_, i) => ({
      ...ETHEREUM_ACCOUNT,
      path: `m/44'/60'/0'/0/${i}`,
    }))
    const imported = await h.submit(
      'import_wallet',
      {
        userId,
        walletName: 'accounts past the cap',
        encryptedBundle: sealTo(h, init, 'init_import_wallet', new TextEncoder().encode(ABANDON)),
        accounts,
      },
      as,
    )
    expect({ status: imported.status, errorCode: imported.body.details?.errorCode }).toEqual({
      status: 412,
      errorCode: 'RESOURCE_LIMIT_REACHED',
    })
  }, 120_000)

  it('import_private_key is refused in an organization at its private-key cap', async () => {
    const h = await createHarness()
    const { sub, userId, as } = await endUser(h)
    await fillRows(h, 'privateKeys', RESOURCE_LIMITS.privateKeysPerOrganization, (i) => ({
      organizationId: sub.organizationId,
      name: `filler ${i}`,
      curve: 'CURVE_SECP256K1' as const,
      publicKey: '',
      sealedPrivateKey: '',
      addresses: [],
      privateKeyTags: [],
      exported: false,
      imported: false,
    }))
    const key = {
      privateKeyName: 'one more',
      curve: 'CURVE_SECP256K1',
      privateKeyTags: [],
      addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
    }
    h.clock.advance(1)
    // Control: the cap is reached, create_private_keys is refused.
    expect((await h.submit('create_private_keys', { privateKeys: [key] }, as)).status).toBe(412)
    h.clock.advance(1)
    const init = await h.submit('init_import_private_key', { userId }, as)
    h.clock.advance(1)
    const secret = new Uint8Array(32).fill(7)
    const imported = await h.submit(
      'import_private_key',
      {
        userId,
        privateKeyName: 'past the cap',
        encryptedBundle: sealTo(h, init, 'init_import_private_key', secret),
        curve: 'CURVE_SECP256K1',
        addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
      },
      as,
    )
    expect({ status: imported.status, errorCode: imported.body.details?.errorCode }).toEqual({
      status: 412,
      errorCode: 'RESOURCE_LIMIT_REACHED',
    })
    expect(await h.service.store.count('privateKeys', 'organizationId', sub.organizationId)).toBe(
      RESOURCE_LIMITS.privateKeysPerOrganization,
    )
  }, 60_000)
})
