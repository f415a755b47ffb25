/**
 * A software passkey authenticator behind `navigator.credentials`, so the client's real passkey
 * code (@simplewebauthn/browser) runs in happy-dom: ES256 keys, "none" attestation, a signature
 * counter, discoverable credentials. For benchmarks and tests only.
 */
import { p256 } from '@noble/curves/nist.js'
import { utf8ToBytes } from '@noble/hashes/utils.js'
import { assertion, attestation, b64url } from './webAuthnEncoding.ts'

interface StoredCredential {
  id: Uint8Array
  privateKey: Uint8Array
  rpId: string
  userHandle: Uint8Array
  counter: number
}

export interface SoftAuthenticator {
  /** Credentials created so far, newest last. */
  readonly credentials: StoredCredential[]
  /** Puts back the `navigator.credentials` and `PublicKeyCredential` that were there before. */
  uninstall(): void
}

const bytesOf = (source: BufferSource) =>
  source instanceof ArrayBuffer
    ? new Uint8Array(source)
    : new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
const arrayBuffer = (bytes: Uint8Array) => bytes.slice().buffer as ArrayBuffer
/** Installs the authenticator on `globalThis` (happy-dom's window). */
export function installSoftAuthenticator(options: { origin?: string } = {}): SoftAuthenticator {
  const origin = options.origin ?? 'http://localhost:5173'
  const credentials: StoredCredential[] = []
  const clientData = (type: string, challenge: BufferSource) =>
    utf8ToBytes(JSON.stringify({ type, challenge: b64url(bytesOf(challenge)), origin, crossOrigin: false }))

  async function create({ publicKey }: CredentialCreationOptions) {
    if (!publicKey) throw new DOMException('publicKey options are required', 'NotSupportedError')
    const rpId = publicKey.rp.id ?? new URL(origin).hostname
    const privateKey = p256.utils.randomSecretKey()
    const credential: StoredCredential = {
      id: globalThis.crypto.getRandomValues(new Uint8Array(16)),
      privateKey,
      rpId,
      userHandle: bytesOf(publicKey.user.id),
      counter: 0,
    }
    credentials.push(credential)
    const { authenticatorData, attestationObject } = attestation(rpId, credential.id, privateKey)
    return {
      id: b64url(credential.id),
      rawId: arrayBuffer(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: arrayBuffer(clientData('webauthn.create', publicKey.challenge)),
        attestationObject: arrayBuffer(attestationObject),
        getTransports: () => ['internal'],
        getPublicKeyAlgorithm: () => -7,
        getAuthenticatorData: () => arrayBuffer(authenticatorData),
        getPublicKey: () => null,
      },
      getClientExtensionResults: () => ({}),
    }
  }

  async function get({ publicKey }: CredentialRequestOptions) {
    if (!publicKey) throw new DOMException('publicKey options are required', 'NotSupportedError')
    const rpId = publicKey.rpId ?? new URL(origin).hostname
    const allowed = (publicKey.allowCredentials ?? []).map((c) => b64url(bytesOf(c.id)))
    const credential = credentials
      .filter((c) => c.rpId === rpId && (allowed.length === 0 || allowed.includes(b64url(c.id))))
      .at(-1)
    if (!credential) throw new DOMException('no passkey for this site', 'NotAllowedError')
    credential.counter++
    const clientDataJSON = clientData('webauthn.get', publicKey.challenge)
    const { authenticatorData, signature } = assertion(
      rpId,
      credential.counter,
      clientDataJSON,
      credential.privateKey,
    )
    return {
      id: b64url(credential.id),
      rawId: arrayBuffer(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      response: {
        authenticatorData: arrayBuffer(authenticatorData),
        clientDataJSON: arrayBuffer(clientDataJSON),
        signature: arrayBuffer(signature),
        userHandle: arrayBuffer(credential.userHandle),
      },
      getClientExtensionResults: () => ({}),
    }
  }

  const scope = globalThis as { PublicKeyCredential?: unknown }
  const previousCredential = scope.PublicKeyCredential
  const previousCredentials = Object.getOwnPropertyDescriptor(navigator, 'credentials')
  scope.PublicKeyCredential = class PublicKeyCredential {}
  Object.defineProperty(navigator, 'credentials', { configurable: true, value: { create, get } })
  return {
    credentials,
    uninstall() {
      scope.PublicKeyCredential = previousCredential
      if (previousCredentials) Object.defineProperty(navigator, 'credentials', previousCredentials)
      else delete (navigator as { credentials?: unknown }).credentials
    },
  }
}
