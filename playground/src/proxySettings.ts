// The operator settings API of the local service (`POST /dev/settings/get|update`), stamped like
// any activity with the parent organization's root API key through Latchkey's own `apiKeyStamper`.
import { p256 } from '@noble/curves/nist.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import {
  type AuthProxySettingsResponse,
  type AuthProxySettingsUpdateRequest,
  apiKeyStamper,
  type ProxySettings as ServiceProxySettings,
  type SignInMethod,
} from 'latchkey/core'
import type { PlaygroundService } from './loadPlaygroundConfig.ts'

/** The fields of the service's auth-proxy settings this page edits (the API takes partial updates). */
export type ProxySettings = Pick<
  ServiceProxySettings,
  | 'enabled'
  | 'allowedOrigins'
  | 'enabledProviders'
  | 'sessionExpirationSeconds'
  | 'maxSessionExpirationSeconds'
  | 'emailTemplate'
  | 'smsTemplate'
> & {
  /** Read-only here: from the response. */
  authProxyConfigId?: string | null
}

export const SIGN_IN_METHOD_LABELS: Record<SignInMethod, string> = {
  email: 'E-mail code',
  sms: 'SMS code',
  passkey: 'Passkey',
  wallet: 'Browser wallet',
  google: 'Google',
  apple: 'Apple',
  facebook: 'Facebook',
  x: 'X',
  discord: 'Discord',
}

/**
 * The dev root key as a non-extractable WebCrypto key (JWK import: the hex private key plus its
 * public point), so stamping goes through the same code as every Latchkey request.
 */
export async function devStamper(service: PlaygroundService) {
  const d = hexToBytes(service.apiPrivateKey)
  const point = p256.getPublicKey(d, false)
  const privateKey = await crypto.subtle.importKey(
    'jwk',
    {
      kty: 'EC',
      crv: 'P-256',
      d: base64urlnopad.encode(d),
      x: base64urlnopad.encode(point.slice(1, 33)),
      y: base64urlnopad.encode(point.slice(33, 65)),
      ext: false,
    },
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['sign'],
  )
  return apiKeyStamper({ publicKey: service.apiPublicKey, privateKey })
}

async function call(
  service: PlaygroundService,
  path: 'get' | 'update',
  extra: object,
): Promise<ProxySettings> {
  const body = JSON.stringify({
    organizationId: service.organizationId,
    timestampMs: String(Date.now()),
    ...extra,
  })
  const stamp = await (await devStamper(service)).stamp(body)
  const response = await fetch(`${service.baseUrl}/dev/settings/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [stamp.header]: stamp.value },
    body,
  })
  const json = (await response.json().catch(() => ({}))) as Partial<AuthProxySettingsResponse> & {
    message?: string
  }
  if (!response.ok || !json.settings) throw new Error(json.message ?? `settings API: HTTP ${response.status}`)
  return { ...json.settings, authProxyConfigId: json.authProxyConfigId ?? null }
}

export const readProxySettings = (service: PlaygroundService) => call(service, 'get', {})

export function writeProxySettings(service: PlaygroundService, settings: ProxySettings) {
  const {
    enabled,
    allowedOrigins,
    enabledProviders,
    sessionExpirationSeconds,
    maxSessionExpirationSeconds,
    emailTemplate,
    smsTemplate,
  } = settings
  const update: Pick<AuthProxySettingsUpdateRequest, 'settings'> = {
    settings: {
      enabled,
      allowedOrigins,
      enabledProviders,
      sessionExpirationSeconds,
      // Left empty, the stored ceiling stays (the API has no "unset": 2592000 is the longest).
      ...(maxSessionExpirationSeconds ? { maxSessionExpirationSeconds } : {}),
      emailTemplate,
      smsTemplate,
    },
  }
  return call(service, 'update', update)
}
