// Wire compatibility through the API with the published client libraries of the public service
// (@turnkey/api-key-stamper stamps, @turnkey/crypto export/import bundles).

import { ACTIVITIES } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { ApiKeyStamper } from '@turnkey/api-key-stamper'
import { decryptExportBundle, encryptWalletToBundle } from '@turnkey/crypto'
import { describe, expect, it } from 'vitest'
import { createHarness, ETHEREUM_ACCOUNT, resultOf } from '../testing/harness.ts'

const ABANDON =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'

describe('published client libraries against the service API', () => {
  it.each(['node', 'purejs'] as const)(
    'accepts @turnkey/api-key-stamper stamps (%s runtime)',
    async (runtime) => {
      const h = await createHarness()
      const stamper = new ApiKeyStamper({
        apiPublicKey: h.service.dev.apiPublicKey,
        apiPrivateKey: h.service.dev.apiPrivateKey,
        runtimeOverride: runtime,
      })
      const body = JSON.stringify({
        type: ACTIVITIES.create_wallet.type,
        timestampMs: String(h.clock.now()),
        organizationId: h.organizationId,
        parameters: { walletName: 'From the SDK', accounts: [ETHEREUM_ACCOUNT] },
      })
      const { stampHeaderName, stampHeaderValue } = await stamper.stamp(body)
      expect(stampHeaderName).toBe('X-Stamp')
      const reply = await h.post('/public/v1/submit/create_wallet', body, {
        [stampHeaderName]: stampHeaderValue,
      })
      expect(reply.status).toBe(200)
      expect(reply.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    },
  )

  it('exports bundles that @turnkey/crypto decrypts, and imports bundles it encrypts', async () => {
    const h = await createHarness()
    const { dev } = h.service
    const embeddedKey = p256.utils.randomSecretKey()
    const targetPublicKey = bytesToHex(p256.getPublicKey(embeddedKey, false))
    const { walletId, addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Out', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const account = resultOf(
      'export_wallet_account',
      await h.submit('export_wallet_account', { address: addresses[0], targetPublicKey }),
    )
    const privateKeyHex = await decryptExportBundle({
      exportBundle: account.exportBundle,
      embeddedKey: bytesToHex(embeddedKey),
      organizationId: h.organizationId,
      dangerouslyOverrideSignerPublicKey: dev.signerPublicKey,
      returnMnemonic: false,
    })
    const publicKey = secp256k1.getPublicKey(hexToBytes(privateKeyHex.replace(/^0x/, '')), false)
    expect(`0x${bytesToHex(keccak_256(publicKey.slice(1)).slice(12))}`).toBe(addresses[0].toLowerCase())
    const wallet = resultOf('export_wallet', await h.submit('export_wallet', { walletId, targetPublicKey }))
    const mnemonic = await decryptExportBundle({
      exportBundle: wallet.exportBundle,
      embeddedKey: bytesToHex(embeddedKey),
      organizationId: h.organizationId,
      dangerouslyOverrideSignerPublicKey: dev.signerPublicKey,
      returnMnemonic: true,
    })
    expect(mnemonic.split(' ')).toHaveLength(12)

    const { importBundle } = resultOf(
      'init_import_wallet',
      await h.submit('init_import_wallet', { userId: dev.userId }),
    )
    const encryptedBundle = await encryptWalletToBundle({
      mnemonic: ABANDON,
      importBundle,
      userId: dev.userId,
      organizationId: h.organizationId,
      dangerouslyOverrideSignerPublicKey: dev.signerPublicKey,
    })
    const imported = resultOf(
      'import_wallet',
      await h.submit('import_wallet', {
        userId: dev.userId,
        walletName: 'In',
        encryptedBundle,
        accounts: [ETHEREUM_ACCOUNT],
      }),
    )
    expect(imported.addresses).toEqual(['0x9858EfFD232B4033E47d90003D41EC34EcaEda94'])
  })
})
