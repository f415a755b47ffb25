import type { ExportBundleData, ImportBundleData, SignedBundle } from '@latchkey/protocol'
import { hpkeOpen } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { decryptExportBundle, encryptPrivateKeyToBundle, encryptWalletToBundle } from '@turnkey/crypto'
import { describe, expect, it } from 'vitest'
import {
  makeExportBundle,
  makeImportBundle,
  openImportCiphertext,
  openSignedBundle,
  signBundle,
} from './bundles.ts'

/** The BIP-39 reference mnemonic used by BIP-44/49/84/86, SEP-0005 and most SDK tests. */
const ABANDON_MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'

const SIGNER = hexToBytes('5a'.repeat(32))
const SIGNER_PUBLIC_HEX = bytesToHex(p256.getPublicKey(SIGNER, false))
const CLIENT = hexToBytes('3c'.repeat(32))
const ORG = 'org-123'
const USER = 'user-456'

describe('signed envelopes', () => {
  it('have the protocol shape and verify against the signer key', () => {
    const bundle = JSON.parse(signBundle({ organizationId: ORG, hello: 'world' }, SIGNER)) as SignedBundle
    expect(Object.keys(bundle)).toEqual(['version', 'data', 'dataSignature', 'enclaveQuorumPublic'])
    expect(bundle.version).toBe('v1.0.0')
    expect(bundle.enclaveQuorumPublic).toBe(SIGNER_PUBLIC_HEX)
    expect(new TextDecoder().decode(hexToBytes(bundle.data))).toBe(
      '{"organizationId":"org-123","hello":"world"}',
    )
    expect(
      p256.verify(hexToBytes(bundle.dataSignature), hexToBytes(bundle.data), hexToBytes(SIGNER_PUBLIC_HEX), {
        format: 'der',
      }),
    ).toBe(true)
    expect(openSignedBundle(JSON.stringify(bundle), p256.getPublicKey(SIGNER, true))).toEqual({
      organizationId: ORG,
      hello: 'world',
    })
  })

  it('refuse forged data, another signer, and garbage', () => {
    const bundle = JSON.parse(signBundle({ organizationId: ORG }, SIGNER)) as SignedBundle
    const forged = { ...bundle, data: bytesToHex(utf8ToBytes('{"organizationId":"evil"}')) }
    expect(() => openSignedBundle(JSON.stringify(forged), p256.getPublicKey(SIGNER))).toThrow(
      /signature is invalid/,
    )
    expect(() => openSignedBundle(JSON.stringify(bundle), p256.getPublicKey(CLIENT))).toThrow(/untrusted key/)
    expect(() => openSignedBundle('nope', p256.getPublicKey(SIGNER))).toThrow(
      expect.objectContaining({ field: 'bundle' }),
    )
  })
})

describe('export bundles', () => {
  it('wallet export: @turnkey/crypto decryptExportBundle verifies our signature and returns the mnemonic', async () => {
    const exportBundle = makeExportBundle({
      plaintext: utf8ToBytes(ABANDON_MNEMONIC),
      targetPublicKey: bytesToHex(p256.getPublicKey(CLIENT, false)),
      organizationId: ORG,
      signerPrivateKey: SIGNER,
    })
    const mnemonic = await decryptExportBundle({
      exportBundle,
      embeddedKey: bytesToHex(CLIENT),
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUBLIC_HEX,
      returnMnemonic: true,
    })
    expect(mnemonic).toBe(ABANDON_MNEMONIC)
    await expect(
      decryptExportBundle({
        exportBundle,
        embeddedKey: bytesToHex(CLIENT),
        organizationId: 'another-org',
        dangerouslyOverrideSignerPublicKey: SIGNER_PUBLIC_HEX,
        returnMnemonic: true,
      }),
    ).rejects.toThrow(/organization id does not match/)
  })

  it('account export with a compressed target key: the raw 32-byte private key, hex in @turnkey/crypto', async () => {
    const privateKey = hexToBytes('1ab42cc412b618bdea3a599e3c9bae199ebf030895b039e9db1e30dafb12b727')
    const exportBundle = makeExportBundle({
      plaintext: privateKey,
      targetPublicKey: bytesToHex(p256.getPublicKey(CLIENT, true)),
      organizationId: ORG,
      signerPrivateKey: SIGNER,
    })
    const hex = await decryptExportBundle({
      exportBundle,
      embeddedKey: bytesToHex(CLIENT),
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUBLIC_HEX,
      returnMnemonic: false,
    })
    expect(hex).toBe(bytesToHex(privateKey))
    // And our own client-side path opens it too.
    const data = openSignedBundle<ExportBundleData>(exportBundle, p256.getPublicKey(SIGNER))
    expect(data.organizationId).toBe(ORG)
    const opened = await hpkeOpen({
      ciphertext: data,
      receiverPublicKey: p256.getPublicKey(CLIENT, false),
      dh: (pub) => p256.getSharedSecret(CLIENT, pub).slice(1),
    })
    expect(opened).toEqual(privateKey)
  })

  it('refuses a bad target key with field targetPublicKey', () => {
    for (const targetPublicKey of ['', 'zz', '04' + '00'.repeat(64), '02' + 'ff'.repeat(32)])
      expect(() =>
        makeExportBundle({
          plaintext: new Uint8Array(1),
          targetPublicKey,
          organizationId: ORG,
          signerPrivateKey: SIGNER,
        }),
      ).toThrow(expect.objectContaining({ field: 'targetPublicKey' }))
  })
})

describe('import bundles', () => {
  const TARGET = hexToBytes('7e'.repeat(32))
  const importBundle = makeImportBundle({
    organizationId: ORG,
    userId: USER,
    targetPublic: p256.getPublicKey(TARGET, true),
    signerPrivateKey: SIGNER,
  })

  it('carry organizationId, userId and the uncompressed target key', () => {
    expect(openSignedBundle<ImportBundleData>(importBundle, p256.getPublicKey(SIGNER))).toEqual({
      organizationId: ORG,
      userId: USER,
      targetPublic: bytesToHex(p256.getPublicKey(TARGET, false)),
    })
  })

  it('@turnkey/crypto encryptWalletToBundle output opens with openImportCiphertext', async () => {
    const encryptedBundle = await encryptWalletToBundle({
      mnemonic: ABANDON_MNEMONIC,
      importBundle,
      userId: USER,
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUBLIC_HEX,
    })
    const plaintext = await openImportCiphertext({ encryptedBundle, targetPrivateKey: TARGET })
    expect(new TextDecoder().decode(plaintext)).toBe(ABANDON_MNEMONIC)
  })

  it('@turnkey/crypto encryptPrivateKeyToBundle output opens too (raw key bytes)', async () => {
    const key = '0x' + '42'.repeat(32)
    const encryptedBundle = await encryptPrivateKeyToBundle({
      privateKey: key,
      keyFormat: 'HEXADECIMAL',
      importBundle,
      userId: USER,
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUBLIC_HEX,
    })
    expect(bytesToHex(await openImportCiphertext({ encryptedBundle, targetPrivateKey: TARGET }))).toBe(
      '42'.repeat(32),
    )
  })

  it('@turnkey/crypto refuses our import bundle for another user (it checks what we signed)', async () => {
    await expect(
      encryptWalletToBundle({
        mnemonic: ABANDON_MNEMONIC,
        importBundle,
        userId: 'someone-else',
        organizationId: ORG,
        dangerouslyOverrideSignerPublicKey: SIGNER_PUBLIC_HEX,
      }),
    ).rejects.toThrow(/user id does not match/)
  })

  it('openImportCiphertext refuses garbage and the wrong key with field encryptedBundle', async () => {
    const encryptedBundle = await encryptWalletToBundle({
      mnemonic: ABANDON_MNEMONIC,
      importBundle,
      userId: USER,
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUBLIC_HEX,
    })
    for (const [bundle, key] of [
      ['not json', TARGET],
      ['{}', TARGET],
      [encryptedBundle, CLIENT],
    ] as const)
      await expect(
        openImportCiphertext({ encryptedBundle: bundle, targetPrivateKey: key }),
      ).rejects.toMatchObject({
        name: 'CryptoInputError',
        field: 'encryptedBundle',
      })
  })
})
