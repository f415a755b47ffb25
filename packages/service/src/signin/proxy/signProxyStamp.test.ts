import { decodeApiKeyStamp } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { verifyApiKeyStamp } from '../../kernel/crypto/index.ts'
import { signProxyStamp } from './signProxyStamp.ts'

describe('signProxyStamp', () => {
  it('makes a P-256 DER stamp over the exact body that the JS verifier accepts', async () => {
    const privateKey = p256.utils.randomSecretKey()
    const publicKey = bytesToHex(p256.getPublicKey(privateKey, true))
    const body = JSON.stringify({ organizationId: 'o', parameters: { contact: 'é@example.com' } })
    const stamp = decodeApiKeyStamp(await signProxyStamp(body, privateKey, publicKey))
    expect(stamp).toEqual({
      publicKey,
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      signature: expect.stringMatching(/^30[0-9a-f]+$/),
    })
    expect(verifyApiKeyStamp(stamp, utf8ToBytes(body))).toBe(true)
    expect(verifyApiKeyStamp(stamp, utf8ToBytes(`${body} `))).toBe(false)
  })
})
