import { p256 } from '@noble/curves/nist.js'
import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { decodeJwtClaims, publicJwk, signJwt, verifyJwt } from './jwt.ts'

const KEY = hexToBytes('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721')
const PUBLIC = p256.getPublicKey(KEY, true)
const NOW = 1_700_000_000
const CLAIMS = {
  exp: NOW + 900,
  public_key: '02' + 'ab'.repeat(32),
  session_type: 'SESSION_TYPE_READ_WRITE',
  user_id: 'u',
  organization_id: 'o',
}

describe('ES256 JWT', () => {
  it('round-trips and carries the header', () => {
    const token = signJwt(CLAIMS, KEY, 'session-key-1')
    const [header] = token.split('.')
    expect(JSON.parse(new TextDecoder().decode(base64urlnopad.decode(header!)))).toEqual({
      alg: 'ES256',
      typ: 'JWT',
      kid: 'session-key-1',
    })
    expect(verifyJwt(token, PUBLIC, NOW)).toEqual(CLAIMS)
    expect(verifyJwt(token, p256.getPublicKey(KEY, false), NOW)).toEqual(CLAIMS)
    expect(decodeJwtClaims(token)).toEqual(CLAIMS)
  })

  it('verifies with WebCrypto and the published JWK (an independent ES256 implementation)', async () => {
    const token = signJwt(CLAIMS, KEY)
    const jwk = publicJwk(PUBLIC, 'k1')
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: 'k1' })
    const key = await crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'verify',
    ])
    const [h, c, s] = token.split('.') as [string, string, string]
    const ok = await crypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      key,
      new Uint8Array(base64urlnopad.decode(s)),
      new Uint8Array(utf8ToBytes(`${h}.${c}`)),
    )
    expect(ok).toBe(true)
  })

  it('refuses expiry, other keys, tampering, other algs and garbage with CryptoInputError', () => {
    const token = signJwt(CLAIMS, KEY)
    const [h, c, s] = token.split('.') as [string, string, string]
    const bad = (t: string, publicKey = PUBLIC, now = NOW) =>
      expect(() => verifyJwt(t, publicKey, now)).toThrow(
        expect.objectContaining({ name: 'CryptoInputError', field: 'token' }),
      )
    bad(token, PUBLIC, CLAIMS.exp)
    bad(token, p256.getPublicKey(hexToBytes('11'.repeat(32))))
    const evil = base64urlnopad.encode(utf8ToBytes(JSON.stringify({ ...CLAIMS, user_id: 'admin' })))
    bad(`${h}.${evil}.${s}`)
    const none = base64urlnopad.encode(utf8ToBytes('{"alg":"none"}'))
    bad(`${none}.${c}.`)
    bad(`${h}.${c}`)
    bad('a.b.c')
    bad(`${h}.${c}.${s}x`)
    expect(() => verifyJwt(token, PUBLIC, NOW)).not.toThrow()
  })
})
