/**
 * API keys that stamp request bodies, and the account specs tests create wallets with: the part of
 * the harness (harness.ts re-exports it) that needs no service, for tests that stamp requests to a
 * service process.
 */
import {
  type AccountSpec,
  type ApiKeyCurve,
  type ApiKeyParams,
  type SignatureScheme,
  STAMP_HEADER,
} from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { signApiKeyStamp, stampPublicKey } from '../kernel/crypto/stamps.ts'

const CURVE_OF_SCHEME: Record<SignatureScheme, ApiKeyCurve> = {
  SIGNATURE_SCHEME_TK_API_P256: 'API_KEY_CURVE_P256',
  SIGNATURE_SCHEME_TK_API_SECP256K1: 'API_KEY_CURVE_SECP256K1',
  SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191: 'API_KEY_CURVE_SECP256K1',
  SIGNATURE_SCHEME_TK_API_ED25519: 'API_KEY_CURVE_ED25519',
}

/** Something that stamps request bodies: an API key or a software passkey. */
export interface Stamper {
  /** Header name and value for `body`. */
  stamp(body: string): [header: string, value: string]
}

/** An API key pair that stamps bodies with `X-Stamp`. */
export interface TestKey extends Stamper {
  scheme: SignatureScheme
  curve: ApiKeyCurve
  privateKey: Uint8Array
  /** As stamps carry it (compressed hex / ed25519 raw hex). */
  publicKey: string
  /** `apiKeys[]` item registering this key. */
  apiKey(name?: string, expirationSeconds?: string): ApiKeyParams
}

export function testKey(
  scheme: SignatureScheme = 'SIGNATURE_SCHEME_TK_API_P256',
  privateKey?: Uint8Array,
): TestKey {
  const secret =
    privateKey ??
    (scheme === 'SIGNATURE_SCHEME_TK_API_P256'
      ? p256.utils.randomSecretKey()
      : scheme === 'SIGNATURE_SCHEME_TK_API_ED25519'
        ? ed25519.utils.randomSecretKey()
        : secp256k1.utils.randomSecretKey())
  const publicKey = stampPublicKey(scheme, secret)
  const curve = CURVE_OF_SCHEME[scheme]
  return {
    scheme,
    curve,
    privateKey: secret,
    publicKey,
    stamp: (body) => [STAMP_HEADER, signApiKeyStamp(body, { scheme, privateKey: secret })],
    apiKey: (name = 'test key', expirationSeconds) => ({
      apiKeyName: name,
      publicKey,
      curveType: curve,
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
    }),
  }
}

export const ETHEREUM_ACCOUNT: AccountSpec = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
}

export const SOLANA_ACCOUNT: AccountSpec = {
  curve: 'CURVE_ED25519',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/501'/0'/0'",
  addressFormat: 'ADDRESS_FORMAT_SOLANA',
}
