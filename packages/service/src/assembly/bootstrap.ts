import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { ServiceError } from '../kernel/base/errors.ts'
import { p256PublicKey, randomP256PrivateKey } from '../kernel/crypto/index.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import { apiKeyInOrganization } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'

/** Credentials of the dev parent organization, printed by the CLI and used by tests and Storybook. */
export interface DevCredentials {
  organizationId: string
  userId: string
  apiKeyId: string
  /** Compressed P-256 hex of the root user's API key. */
  apiPublicKey: string
  /** Its private key (hex): dev credentials, like a local chain node prints its accounts. */
  apiPrivateKey: string
  /** Uncompressed P-256 hex of the key that signs export/import bundles. */
  signerPublicKey: string
  /** Uncompressed P-256 hex of the key that signs session JWTs. */
  sessionPublicKey: string
  /** Id of the dev organization's auth-proxy configuration (set by the proxy plugin). */
  authProxyConfigId: string | undefined
}

export const DEV_ORGANIZATION_NAME = 'Latchkey Dev'

/** First-start choices for the dev organization (ignored once the store holds one). */
export interface DevOptions {
  /** @default 'Latchkey Dev' */
  organizationName?: string
  /**
   * Hex P-256 private key for the root user's API key, for fixed dev credentials (Storybook,
   * fixtures). Never use one that guards anything.
   * @default a random key
   */
  apiPrivateKey?: string
}

/** `dev`: a local service with its dev surfaces; `production`: `latchkey-service start`. */
export type ServiceMode = 'dev' | 'production'

/**
 * First start: the service keys (bundle signer, session signer) and, in dev mode, the dev parent
 * organization with a root user and a P-256 API key. A production service makes no organization
 * here (`latchkey-service init` makes the parent organization with the operator's own key) and so
 * holds no private key anyone was shown. Later starts find the keys in the store and keep them.
 */
export async function bootstrapService(
  tx: Transaction,
  runtime: Runtime,
  options: DevOptions = {},
  mode: ServiceMode = 'dev',
): Promise<void> {
  if (await tx.get('service', 'service')) return
  const now = runtime.now()
  const signerKey = randomP256PrivateKey()
  const sessionKey = randomP256PrivateKey()
  const keys = {
    sealedSignerKey: runtime.seal(signerKey),
    signerPublicKey: bytesToHex(p256PublicKey(signerKey, false)),
    sealedSessionKey: runtime.seal(sessionKey),
    sessionPublicKey: bytesToHex(p256PublicKey(sessionKey, false)),
  }
  signerKey.fill(0)
  sessionKey.fill(0)
  if (mode === 'production') {
    await tx.put('service', { id: 'service', ...keys, createdAt: now, updatedAt: now })
    return
  }
  const apiKey = options.apiPrivateKey ? hexToBytes(options.apiPrivateKey) : randomP256PrivateKey()
  const organizationId = runtime.newId()
  const userId = runtime.newId()
  const apiKeyId = runtime.newId()
  const apiPublicKey = bytesToHex(p256PublicKey(apiKey, true))
  await tx.put('organizations', {
    id: organizationId,
    name: options.organizationName ?? DEV_ORGANIZATION_NAME,
    rootUserIds: [userId],
    rootQuorumThreshold: 1,
    createdAt: now,
    updatedAt: now,
  })
  await tx.put('users', { id: userId, organizationId, userName: 'Dev Root', createdAt: now, updatedAt: now })
  await tx.put('apiKeys', {
    id: apiKeyId,
    organizationId,
    userId,
    name: 'Dev root key',
    publicKey: apiPublicKey,
    keyInOrganization: apiKeyInOrganization(apiPublicKey, organizationId),
    curve: 'API_KEY_CURVE_P256',
    credentialType: 'CREDENTIAL_TYPE_API_KEY_P256',
    createdAt: now,
    updatedAt: now,
  })
  await tx.put('service', {
    id: 'service',
    ...keys,
    devOrganizationId: organizationId,
    devUserId: userId,
    devApiKeyId: apiKeyId,
    sealedDevApiPrivateKey: runtime.seal(apiKey),
    devApiPublicKey: apiPublicKey,
    createdAt: now,
    updatedAt: now,
  })
}

/** `service.dev` of a service that has no dev organization (production mode). */
export class NoDevOrganizationError extends ServiceError {
  override name = 'NoDevOrganizationError'
  constructor() {
    super(
      'this service has no dev organization (it runs in production mode; its parent organization is made by `latchkey-service init`)',
    )
  }
}

export function devCredentials(runtime: Runtime): DevCredentials {
  const row = runtime.serviceRow
  if (
    row.devOrganizationId === undefined ||
    row.devUserId === undefined ||
    row.devApiKeyId === undefined ||
    row.devApiPublicKey === undefined ||
    row.sealedDevApiPrivateKey === undefined
  )
    throw new NoDevOrganizationError()
  return {
    organizationId: row.devOrganizationId,
    userId: row.devUserId,
    apiKeyId: row.devApiKeyId,
    apiPublicKey: row.devApiPublicKey,
    apiPrivateKey: bytesToHex(runtime.open(row.sealedDevApiPrivateKey)),
    signerPublicKey: row.signerPublicKey,
    sessionPublicKey: row.sessionPublicKey,
    authProxyConfigId: row.authProxyConfigId,
  }
}
