import type { ExportBundleData, HpkeCiphertext, ImportBundleData, SignedBundle } from '@latchkey/protocol'
import { BUNDLE_VERSION } from '@latchkey/protocol'
import { hpkeOpen, hpkeSeal } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { CryptoInputError } from './errors.ts'

const HEX = /^([0-9a-fA-F]{2})+$/

/**
 * Wraps `data` in the signed envelope of export/import bundles: `data` = hex of its UTF-8 JSON,
 * `dataSignature` = DER ECDSA-P256-SHA256 over those bytes, `enclaveQuorumPublic` = signer key
 * (uncompressed hex). Returns the envelope as a JSON string.
 */
export function signBundle(data: object, signerPrivateKey: Uint8Array): string {
  const bytes = utf8ToBytes(JSON.stringify(data))
  const bundle: SignedBundle = {
    version: BUNDLE_VERSION,
    data: bytesToHex(bytes),
    dataSignature: bytesToHex(p256.sign(bytes, signerPrivateKey, { prehash: true, format: 'der' })),
    enclaveQuorumPublic: bytesToHex(p256.getPublicKey(signerPrivateKey, false)),
  }
  return JSON.stringify(bundle)
}

/**
 * Checks a signed bundle against the trusted signer key and returns its decoded data.
 * Throws CryptoInputError when the envelope is malformed, signed by another key, or forged.
 */
export function openSignedBundle<T>(bundle: string, trustedSignerPublicKey: Uint8Array): T {
  let envelope: Partial<SignedBundle>
  try {
    envelope = JSON.parse(bundle) as Partial<SignedBundle>
  } catch {
    throw new CryptoInputError('bundle is not JSON', 'bundle')
  }
  const { data, dataSignature, enclaveQuorumPublic } = envelope ?? {}
  if (
    typeof data !== 'string' ||
    !HEX.test(data) ||
    typeof dataSignature !== 'string' ||
    !HEX.test(dataSignature)
  )
    throw new CryptoInputError('bundle needs hex data and dataSignature', 'bundle')
  const trusted = bytesToHex(p256.Point.fromBytes(trustedSignerPublicKey).toBytes(false))
  if (typeof enclaveQuorumPublic !== 'string' || enclaveQuorumPublic.toLowerCase() !== trusted)
    throw new CryptoInputError('bundle was signed by an untrusted key', 'bundle')
  const bytes = hexToBytes(data.toLowerCase())
  let valid = false
  try {
    valid = p256.verify(hexToBytes(dataSignature.toLowerCase()), bytes, hexToBytes(trusted), {
      prehash: true,
      format: 'der',
      lowS: false,
    })
  } catch {
    valid = false
  }
  if (!valid) throw new CryptoInputError('bundle signature is invalid', 'bundle')
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T
  } catch {
    throw new CryptoInputError('bundle data is not JSON', 'bundle')
  }
}

function targetKeyBytes(targetPublicKey: string): Uint8Array {
  const hex = typeof targetPublicKey === 'string' ? targetPublicKey.replace(/^0x/, '') : ''
  if (!HEX.test(hex) || (hex.length !== 130 && hex.length !== 66))
    throw new CryptoInputError(
      'targetPublicKey must be a P-256 public key (65 or 33 bytes hex)',
      'targetPublicKey',
    )
  try {
    return p256.Point.fromBytes(hexToBytes(hex.toLowerCase())).toBytes(false)
  } catch {
    throw new CryptoInputError('targetPublicKey is not a valid P-256 public key', 'targetPublicKey')
  }
}

/**
 * An `exportBundle`: `plaintext` (wallet: mnemonic text bytes; account: raw 32-byte private key)
 * HPKE-sealed to the client's target key, inside a signed envelope naming the organization.
 */
export function makeExportBundle(input: {
  plaintext: Uint8Array
  targetPublicKey: string
  organizationId: string
  signerPrivateKey: Uint8Array
}): string {
  const sealed = hpkeSeal({
    plaintext: input.plaintext,
    receiverPublicKey: targetKeyBytes(input.targetPublicKey),
  })
  const data: ExportBundleData = { ...sealed, organizationId: input.organizationId }
  return signBundle(data, input.signerPrivateKey)
}

/** An `importBundle`: the (uncompressed) key the client encrypts its secret to, signed. */
export function makeImportBundle(input: {
  organizationId: string
  userId: string
  targetPublic: Uint8Array
  signerPrivateKey: Uint8Array
}): string {
  let targetPublic: string
  try {
    targetPublic = bytesToHex(p256.Point.fromBytes(input.targetPublic).toBytes(false))
  } catch {
    throw new CryptoInputError('targetPublic is not a valid P-256 public key', 'targetPublic')
  }
  const data: ImportBundleData = { organizationId: input.organizationId, userId: input.userId, targetPublic }
  return signBundle(data, input.signerPrivateKey)
}

/**
 * Decrypts an import_wallet/import_private_key `encryptedBundle` (HpkeCiphertext JSON) with the
 * import target's private key. Throws CryptoInputError (field 'encryptedBundle') on any failure.
 */
export async function openImportCiphertext(input: {
  encryptedBundle: string
  targetPrivateKey: Uint8Array
  /** The target key's public half (65 bytes, uncompressed), when known. @default computed */
  targetPublicKey?: Uint8Array
  /** ECDH of the target key with the sender's key (a native one). @default noble's P-256 */
  ecdh?: (privateKey: Uint8Array, publicKey: Uint8Array) => Uint8Array
}): Promise<Uint8Array> {
  let ciphertext: HpkeCiphertext
  try {
    ciphertext = JSON.parse(input.encryptedBundle) as HpkeCiphertext
  } catch {
    throw new CryptoInputError('encryptedBundle is not JSON', 'encryptedBundle')
  }
  const receiverPublicKey = input.targetPublicKey ?? p256.getPublicKey(input.targetPrivateKey, false)
  const ecdh =
    input.ecdh ??
    ((privateKey: Uint8Array, publicKey: Uint8Array) =>
      p256.getSharedSecret(privateKey, publicKey, true).slice(1))
  try {
    return await hpkeOpen({
      ciphertext,
      receiverPublicKey,
      dh: (senderPublic) => ecdh(input.targetPrivateKey, senderPublic),
    })
  } catch (error) {
    throw new CryptoInputError(
      `encryptedBundle cannot be decrypted: ${(error as Error).message}`,
      'encryptedBundle',
    )
  }
}
