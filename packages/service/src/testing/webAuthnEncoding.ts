/**
 * What a software ES256 authenticator writes, shared by the harness's stamping passkey and the
 * `navigator.credentials` stand-in: attested authenticator data with a "none" attestation for
 * registration, plain authenticator data for assertions, and the assertion signature.
 */
import { p256 } from '@noble/curves/nist.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { isoCBOR } from '@simplewebauthn/server/helpers'

export const b64url = (bytes: Uint8Array) => {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

const counterBytes = (counter: number) => {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, counter)
  return out
}

/** The COSE key (EC2, ES256, P-256) of `privateKey`'s public key. */
export function coseKeyOf(privateKey: Uint8Array): Uint8Array {
  const point = p256.getPublicKey(privateKey, false)
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, point.slice(1, 33)],
      [-3, point.slice(33)],
    ]),
  )
}

/** Registration: authenticator data with the credential's COSE key, wrapped in a "none" attestation. */
export function attestation(rpId: string, credentialId: Uint8Array, privateKey: Uint8Array) {
  const cose = coseKeyOf(privateKey)
  const authenticatorData = concatBytes(
    sha256(utf8ToBytes(rpId)),
    new Uint8Array([0x45]), // user present, user verified, attested credential data
    counterBytes(0),
    new Uint8Array(16), // aaguid
    new Uint8Array([0, credentialId.length]),
    credentialId,
    cose,
  )
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authenticatorData],
    ]) as never,
  )
  return { authenticatorData, attestationObject }
}

/** An assertion: authenticator data (user present and verified) and its DER ES256 signature. */
export function assertion(rpId: string, counter: number, clientDataJson: Uint8Array, privateKey: Uint8Array) {
  const authenticatorData = concatBytes(
    sha256(utf8ToBytes(rpId)),
    new Uint8Array([0x05]),
    counterBytes(counter),
  )
  const signature = p256.sign(concatBytes(authenticatorData, sha256(clientDataJson)), privateKey, {
    prehash: true,
    format: 'der',
  })
  return { authenticatorData, signature }
}
