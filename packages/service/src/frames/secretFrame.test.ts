import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { createService } from '../assembly/createService.ts'
import { makeExportBundle, makeImportBundle, openImportCiphertext } from '../kernel/crypto/index.ts'
import { FRAME_SCRIPT, secretFramePlugin } from './secretFrame.ts'

// The frame's own functions, evaluated exactly as the page runs them (WebCrypto only).
const frame = new Function(
  `${FRAME_SCRIPT}; return { hpkeOpen, hpkeSeal, openSignedBundle, hexToBytes, bytesToHex, derToRaw }`,
)() as {
  hpkeOpen(key: CryptoKey, receiver: Uint8Array, enc: Uint8Array, ct: Uint8Array): Promise<Uint8Array>
  hpkeSeal(
    receiver: Uint8Array,
    plaintext: Uint8Array,
  ): Promise<{ encappedPublic: string; ciphertext: string }>
  openSignedBundle(bundle: string, signer: string): Promise<Record<string, string>>
  hexToBytes(hex: string): Uint8Array
}

const signerPrivateKey = p256.utils.randomSecretKey()
const signerPublicKey = bytesToHex(p256.getPublicKey(signerPrivateKey, false))
const MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'

describe('secret frame script', () => {
  it('verifies an export bundle and decrypts it with a non-extractable key', async () => {
    const keys = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits'])
    const receiver = new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey))
    const bundle = makeExportBundle({
      plaintext: utf8ToBytes(MNEMONIC),
      targetPublicKey: bytesToHex(receiver),
      organizationId: 'org-1',
      signerPrivateKey,
    })
    const data = await frame.openSignedBundle(bundle, signerPublicKey)
    expect(data.organizationId).toBe('org-1')
    const plaintext = await frame.hpkeOpen(
      keys.privateKey,
      receiver,
      frame.hexToBytes(data.encappedPublic!),
      frame.hexToBytes(data.ciphertext!),
    )
    expect(new TextDecoder().decode(plaintext)).toBe(MNEMONIC)
    await expect(crypto.subtle.exportKey('pkcs8', keys.privateKey)).rejects.toThrow()
  })

  it('refuses bundles signed by another key or tampered with', async () => {
    const bundle = makeExportBundle({
      plaintext: utf8ToBytes(MNEMONIC),
      targetPublicKey: signerPublicKey,
      organizationId: 'org-1',
      signerPrivateKey,
    })
    const other = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), false))
    await expect(frame.openSignedBundle(bundle, other)).rejects.toThrow('BUNDLE_SIGNATURE_INVALID')
    const envelope = JSON.parse(bundle)
    envelope.data = envelope.data.replace(/.$/, (c: string) => (c === '0' ? '1' : '0'))
    await expect(frame.openSignedBundle(JSON.stringify(envelope), signerPublicKey)).rejects.toThrow(
      'BUNDLE_SIGNATURE_INVALID',
    )
  })

  it('encrypts a typed phrase to the import bundle target so the service can open it', async () => {
    const targetPrivateKey = p256.utils.randomSecretKey()
    const bundle = makeImportBundle({
      organizationId: 'org-1',
      userId: 'user-1',
      targetPublic: p256.getPublicKey(targetPrivateKey, false),
      signerPrivateKey,
    })
    const data = await frame.openSignedBundle(bundle, signerPublicKey)
    expect({ organizationId: data.organizationId, userId: data.userId }).toEqual({
      organizationId: 'org-1',
      userId: 'user-1',
    })
    const sealed = await frame.hpkeSeal(frame.hexToBytes(data.targetPublic!), utf8ToBytes(MNEMONIC))
    const opened = await openImportCiphertext({ encryptedBundle: JSON.stringify(sealed), targetPrivateKey })
    expect(new TextDecoder().decode(opened)).toBe(MNEMONIC)
  })
})

describe('secret frame routes', async () => {
  const service = await createService({ plugins: [secretFramePlugin] })

  it('serves the frame with a nonce CSP limited to the embedding origin', async () => {
    const response = await service.app.request('/frame/export?origin=http://localhost:6006')
    expect(response.status).toBe(200)
    const csp = response.headers.get('content-security-policy') ?? ''
    expect(csp).toMatch(/^default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]+'/)
    expect(csp).toContain('frame-ancestors http://localhost:6006')
    const html = await response.text()
    expect(html).toContain(`"signerPublicKey":"${service.dev.signerPublicKey}"`)
    expect(html).toContain('"parentOrigin":"http://localhost:6006"')
  })

  it('refuses to serve a frame without the embedding origin', async () => {
    expect((await service.app.request('/frame/import')).status).toBe(400)
    expect((await service.app.request('/frame/import?origin=javascript:alert(1)')).status).toBe(400)
  })
})
