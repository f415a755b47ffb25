/** Signed envelope of `exportBundle` and `importBundle`: `data` signed by the service's signer key. */
export interface SignedBundle {
  version: 'v1.0.0'
  /** Hex of the UTF-8 JSON payload. */
  data: string
  /** DER hex ECDSA-P256-SHA256 over the decoded `data` bytes. */
  dataSignature: string
  /** The service's signer key, uncompressed hex. */
  enclaveQuorumPublic: string
}

/** HPKE ciphertext: `encappedPublic` uncompressed P-256 hex, `ciphertext` hex. */
export interface HpkeCiphertext {
  encappedPublic: string
  ciphertext: string
}

export interface ExportBundleData extends HpkeCiphertext {
  organizationId: string
}

export interface ImportBundleData {
  organizationId: string
  userId: string
  /** Uncompressed P-256 hex the client encrypts the secret to. */
  targetPublic: string
  /**
   * Set only on the organization's import key (`latchkey_init_user_import`): `organization_import_key`.
   * A user's own import target (`init_import_wallet`, `init_import_private_key`) names none, and a
   * client sealing a user's secret refuses a bundle that names one.
   */
  purpose?: 'organization_import_key'
}

export const BUNDLE_VERSION = 'v1.0.0'

/**
 * HPKE `info` of the bundle profile (the published @turnkey/crypto bakes it into its key
 * schedule, so bundles only interoperate with this value). Every HPKE here uses it: the noble one
 * of `@latchkey/protocol/hpke`, the kit's WebCrypto seal and the service's secret frames.
 */
export const BUNDLE_HPKE_INFO_TEXT = 'turnkey_hpke'
