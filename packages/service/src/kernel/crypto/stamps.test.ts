import type { ApiKeyStamp, SignatureScheme } from '@latchkey/protocol'
import { decodeApiKeyStamp, SIGNATURE_SCHEMES } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { ApiKeyStamper } from '@turnkey/api-key-stamper'
import { eip191Signer } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { parseDerSignatureLenient, signApiKeyStamp, stampPublicKey, verifyApiKeyStamp } from './stamps.ts'

const BODY =
  '{"type":"ACTIVITY_TYPE_CREATE_WALLET","timestampMs":"1700000000000","organizationId":"o","parameters":{}}'
const BODY_BYTES = utf8ToBytes(BODY)
const KEY = hexToBytes('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721')

describe('stamps made by the published @turnkey/api-key-stamper verify here', () => {
  it.each(['purejs', 'node'] as const)('P-256 (%s runtime)', async (runtimeOverride) => {
    const apiPublicKey = bytesToHex(p256.getPublicKey(KEY, true))
    const stamper = new ApiKeyStamper({
      apiPublicKey,
      apiPrivateKey: bytesToHex(KEY),
      runtimeOverride: runtimeOverride as never,
    })
    for (let i = 0; i < 5; i++) {
      const body = `${BODY}${' '.repeat(i)}`
      const { stampHeaderName, stampHeaderValue } = await stamper.stamp(body)
      expect(stampHeaderName).toBe('X-Stamp')
      const stamp = decodeApiKeyStamp(stampHeaderValue)
      expect(stamp.scheme).toBe('SIGNATURE_SCHEME_TK_API_P256')
      expect(verifyApiKeyStamp(stamp, utf8ToBytes(body))).toBe(true)
      // Same stamp over other bytes (even re-serialised equal JSON) must fail.
      expect(verifyApiKeyStamp(stamp, utf8ToBytes(JSON.stringify(JSON.parse(body)) + 'x'))).toBe(false)
    }
  })
})

describe('signApiKeyStamp ↔ verifyApiKeyStamp for every scheme', () => {
  it.each(SIGNATURE_SCHEMES)('%s', (scheme: SignatureScheme) => {
    const header = signApiKeyStamp(BODY, { scheme, privateKey: KEY })
    const stamp = decodeApiKeyStamp(header)
    expect(stamp.publicKey).toBe(stampPublicKey(scheme, KEY))
    expect(verifyApiKeyStamp(stamp, BODY_BYTES)).toBe(true)
    expect(verifyApiKeyStamp(stamp, utf8ToBytes(BODY + ' '))).toBe(false)
    const otherKey = stampPublicKey(scheme, hexToBytes('11'.repeat(32)))
    expect(verifyApiKeyStamp({ ...stamp, publicKey: otherKey }, BODY_BYTES)).toBe(false)
  })

  it('P-256 stamps use the published layout: compressed key, DER signature over SHA-256(body)', () => {
    const stamp = decodeApiKeyStamp(
      signApiKeyStamp(BODY, { scheme: 'SIGNATURE_SCHEME_TK_API_P256', privateKey: KEY }),
    )
    expect(stamp.publicKey).toMatch(/^0[23][0-9a-f]{64}$/)
    expect(stamp.signature.startsWith('30')).toBe(true)
    expect(
      p256.verify(hexToBytes(stamp.signature), BODY_BYTES, hexToBytes(stamp.publicKey), { format: 'der' }),
    ).toBe(true)
  })

  it('EIP-191 stamps: micro-eth-signer personal_sign signatures verify, with v 27/28 or 0/1, and DER', () => {
    const publicKey = bytesToHex(secp256k1.getPublicKey(KEY, true))
    const scheme = 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191' as const
    const signature = eip191Signer.sign(BODY, KEY).replace(/^0x/, '')
    expect(signature).toHaveLength(130)
    expect(verifyApiKeyStamp({ publicKey, scheme, signature }, BODY_BYTES)).toBe(true)
    const v = Number.parseInt(signature.slice(128), 16)
    const zeroOne = signature.slice(0, 128) + (v - 27).toString(16).padStart(2, '0')
    expect(verifyApiKeyStamp({ publicKey, scheme, signature: zeroOne }, BODY_BYTES)).toBe(true)
    const wrongV = signature.slice(0, 128) + (v === 27 ? '1c' : '1b')
    expect(verifyApiKeyStamp({ publicKey, scheme, signature: wrongV }, BODY_BYTES)).toBe(false)
    const digest = hexToBytes(eip191Signer.getHash(BODY_BYTES).slice(2))
    const der = bytesToHex(secp256k1.sign(digest, KEY, { prehash: false, format: 'der' }))
    expect(verifyApiKeyStamp({ publicKey, scheme, signature: der }, BODY_BYTES)).toBe(true)
  })

  it('accepts non-minimal DER (extra leading zero) for EIP-191 but rejects malformed DER', () => {
    const publicKey = bytesToHex(secp256k1.getPublicKey(KEY, true))
    const digest = hexToBytes(eip191Signer.getHash(BODY_BYTES).slice(2))
    const compact = secp256k1.sign(digest, KEY, { prehash: false })
    const int = (bytes: Uint8Array) => concatBytes(new Uint8Array([0x02, bytes.length + 1, 0]), bytes)
    const r = int(compact.slice(0, 32))
    const s = int(compact.slice(32))
    const der = concatBytes(new Uint8Array([0x30, r.length + s.length]), r, s)
    const scheme = 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191' as const
    expect(verifyApiKeyStamp({ publicKey, scheme, signature: bytesToHex(der) }, BODY_BYTES)).toBe(true)
    expect(parseDerSignatureLenient(der.slice(0, -1))).toBeUndefined()
    expect(parseDerSignatureLenient(concatBytes(der, new Uint8Array([0])))).toBeUndefined()
  })

  it('ed25519 stamps are 64-byte signatures over the body', () => {
    const stamp = decodeApiKeyStamp(
      signApiKeyStamp(BODY_BYTES, { scheme: 'SIGNATURE_SCHEME_TK_API_ED25519', privateKey: KEY }),
    )
    expect(stamp.publicKey).toBe(bytesToHex(ed25519.getPublicKey(KEY)))
    expect(stamp.signature).toBe(bytesToHex(ed25519.sign(BODY_BYTES, KEY)))
  })
})

describe('verifyApiKeyStamp never throws on garbage', () => {
  const valid = decodeApiKeyStamp(
    signApiKeyStamp(BODY, { scheme: 'SIGNATURE_SCHEME_TK_API_P256', privateKey: KEY }),
  )
  it.each([
    ['null stamp', null],
    ['non-hex key', { ...valid, publicKey: 'zz' }],
    ['not a point', { ...valid, publicKey: '02' + 'ff'.repeat(32) }],
    ['empty signature', { ...valid, signature: '' }],
    ['odd-length signature', { ...valid, signature: valid.signature.slice(1) }],
    ['unknown scheme', { ...valid, scheme: 'SIGNATURE_SCHEME_NOPE' }],
    ['number fields', { publicKey: 1, scheme: 'SIGNATURE_SCHEME_TK_API_ED25519', signature: 2 }],
    ['short ed25519', { publicKey: '00', scheme: 'SIGNATURE_SCHEME_TK_API_ED25519', signature: '00' }],
    [
      'eip191 65 zero bytes',
      {
        publicKey: valid.publicKey,
        scheme: 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191',
        signature: '00'.repeat(65),
      },
    ],
  ])('%s', (_name, stamp) => {
    expect(verifyApiKeyStamp(stamp as unknown as ApiKeyStamp, BODY_BYTES)).toBe(false)
  })
})
