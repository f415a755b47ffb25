import type { ProxySettings } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import type { Runtime } from '../kernel/Runtime.ts'
import { apiKeyInOrganization, type ProxyConfigRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import { defaultProxySettings } from './defaultProxySettings.ts'

export const PROXY_USER_NAME = 'Auth Proxy'

/**
 * Switching the proxy on: the first time, a proxy user (not a root user: it may submit only the
 * sign-in activities and create sub-organizations) and its P-256 API key are created; the
 * private key is stored sealed in the configuration and opened only while a request is signed.
 */
export async function ensureProxyUser(
  tx: Transaction,
  runtime: Runtime,
  config: ProxyConfigRow,
): Promise<ProxyConfigRow> {
  if (config.proxyUserId && config.sealedProxyPrivateKey && (await tx.get('users', config.proxyUserId)))
    return config
  const now = runtime.now()
  const userId = runtime.newId()
  await tx.put('users', {
    id: userId,
    organizationId: config.organizationId,
    userName: PROXY_USER_NAME,
    createdAt: now,
    updatedAt: now,
  })
  const privateKey = p256.utils.randomSecretKey()
  const proxyPublicKey = bytesToHex(p256.getPublicKey(privateKey, true))
  await tx.put('apiKeys', {
    id: runtime.newId(),
    organizationId: config.organizationId,
    userId,
    name: 'Auth proxy key',
    publicKey: proxyPublicKey,
    keyInOrganization: apiKeyInOrganization(proxyPublicKey, config.organizationId),
    curve: 'API_KEY_CURVE_P256',
    credentialType: 'CREDENTIAL_TYPE_API_KEY_P256',
    createdAt: now,
    updatedAt: now,
  })
  const sealedProxyPrivateKey = runtime.seal(privateKey)
  privateKey.fill(0)
  return await tx.put('proxyConfigs', {
    ...config,
    proxyUserId: userId,
    sealedProxyPrivateKey,
    updatedAt: now,
  })
}

/**
 * The session a login of `settings`' organization gets when it asks for none: its default, cut to
 * its ceiling (`maxSessionExpirationSeconds`; `start` may store a default the dashboard's ceiling
 * is below).
 */
export function sessionDefaultOf(settings: ProxySettings): string {
  const { sessionExpirationSeconds: seconds, maxSessionExpirationSeconds: ceiling } = settings
  return ceiling !== undefined && Number(ceiling) < Number(seconds) ? ceiling : seconds
}

/** Writes (creating if needed) an organization's proxy configuration; enabling it provisions the proxy user. */
export async function saveProxyConfig(
  tx: Transaction,
  runtime: Runtime,
  organizationId: string,
  changes: Partial<ProxySettings>,
): Promise<ProxyConfigRow> {
  const now = runtime.now()
  const existing = (await tx.findBy('proxyConfigs', 'organizationId', organizationId))[0]
  const base = existing?.settings ?? defaultProxySettings()
  const settings: ProxySettings = {
    ...base,
    ...changes,
    // Client ids are set one provider at a time: naming one keeps the others' (each binds its
    // provider's codes to this app, `oauth2_authenticate`).
    oauth: {
      ...base.oauth,
      ...changes.oauth,
      clientIds: { ...base.oauth.clientIds, ...changes.oauth?.clientIds },
    },
  }
  let row = await tx.put('proxyConfigs', {
    ...(existing ?? { id: runtime.newId(), organizationId, createdAt: now }),
    enabled: settings.enabled,
    settings,
    updatedAt: now,
  })
  if (row.enabled) row = await ensureProxyUser(tx, runtime, row)
  return row
}

/** One-time codes and spent-token markers older than this are dropped at start-up. */
const PLUGIN_ROW_RETENTION_MS = 24 * 3600 * 1000

/** Start-up housekeeping: forget dead OTP records and markers of tokens that have long expired. */
export async function pruneSignInRows(tx: Transaction, runtime: Runtime): Promise<void> {
  const cutoff = runtime.now() - PLUGIN_ROW_RETENTION_MS
  for (const kind of [
    'otp',
    'otp-target',
    'verification-token',
    'verification-token-signup',
    'oidc-token',
    'oidc-token-link',
  ])
    for (const row of await tx.findBy('pluginRows', 'kind', kind))
      if (row.updatedAt < cutoff) await tx.delete('pluginRows', row.id)
}

/** Start-up: the dev organization gets an enabled proxy configuration once. */
export async function bootstrapDevProxyConfig(tx: Transaction, runtime: Runtime): Promise<void> {
  const row = await tx.get('service', 'service')
  // A production service has no dev organization (`init` makes the parent's configuration).
  if (row?.devOrganizationId === undefined) return
  const existing = (await tx.findBy('proxyConfigs', 'organizationId', row.devOrganizationId))[0]
  const config = existing ?? (await saveProxyConfig(tx, runtime, row.devOrganizationId, {}))
  if (row.authProxyConfigId !== config.id) await tx.put('service', { ...row, authProxyConfigId: config.id })
}
