import {
  type AuthProxySettingsResponse,
  OAUTH_METHODS,
  type ProxySettings,
  SETTINGS_ROUTES,
  SIGN_IN_METHODS,
  STAMP_HEADER,
  WEBAUTHN_STAMP_HEADER,
} from '@latchkey/protocol'
import type { Hono } from 'hono'
import { authenticate } from '../../auth/authenticate.ts'
import { MAX_SESSION_SECONDS } from '../../domain/sessions.ts'
import { ServiceError } from '../../errors.ts'
import { Reader, stringItem } from '../../pipeline/Reader.ts'
import { checkTimestamp, parseBody } from '../../pipeline/submitActivity.ts'
import type { Runtime } from '../../Runtime.ts'
import type { ProxyConfigRow } from '../../store/model.ts'
import { saveProxyConfig } from '../proxyConfig.ts'
import { defaultProxySettings } from '../signInState.ts'

export { SETTINGS_ROUTES }

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': `Content-Type, Accept, ${STAMP_HEADER}, ${WEBAUTHN_STAMP_HEADER}`,
  'Access-Control-Max-Age': '600',
}

function render(organizationId: string, row: ProxyConfigRow | undefined): AuthProxySettingsResponse {
  return {
    organizationId,
    authProxyConfigId: row?.id ?? null,
    proxyUserId: row?.proxyUserId ?? null,
    settings: row ? { ...row.settings, enabled: row.enabled } : { ...defaultProxySettings(), enabled: false },
  }
}

const isOrigin = (value: string) => {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value
  } catch {
    return false
  }
}

const isUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

function url(r: Reader, name: string): string {
  const value = r.string(name, { max: 2048 })
  if (!isUrl(value))
    throw new ServiceError('FIELD_INVALID', `${r.field(name)} must be an http(s) URL`, r.field(name))
  return value
}

/** Validates a partial `ProxySettings`; every field is optional, unknown ones are ignored. */
export function readSettingsChanges(r: Reader): Partial<ProxySettings> {
  const changes: Partial<ProxySettings> = {}
  const enabled = r.optBool('enabled')
  if (enabled !== undefined) changes.enabled = enabled
  const origins = r.optArray('allowedOrigins', stringItem, { min: 1, max: 50 })
  if (origins) {
    const bad = origins.find((origin) => origin !== '*' && !isOrigin(origin))
    if (bad !== undefined)
      throw new ServiceError(
        'FIELD_INVALID',
        `${r.field('allowedOrigins')} holds ${JSON.stringify(bad)}: use "*" or origins like https://app.example.com (no path)`,
        r.field('allowedOrigins'),
      )
    changes.allowedOrigins = [...new Set(origins)]
  }
  const providers = r.optArray(
    'enabledProviders',
    (value, field) => {
      if (!SIGN_IN_METHODS.includes(value as never))
        throw new ServiceError('ENUM_INVALID', `${field} must be one of ${SIGN_IN_METHODS.join(', ')}`, field)
      return value as (typeof SIGN_IN_METHODS)[number]
    },
    { max: SIGN_IN_METHODS.length },
  )
  if (providers) changes.enabledProviders = SIGN_IN_METHODS.filter((m) => providers.includes(m))
  const seconds = r.optUintString('sessionExpirationSeconds', { max: MAX_SESSION_SECONDS })
  if (seconds !== undefined) {
    if (Number(seconds) < 60)
      throw new ServiceError(
        'FIELD_INVALID',
        `${r.field('sessionExpirationSeconds')} must be at least 60`,
        r.field('sessionExpirationSeconds'),
      )
    changes.sessionExpirationSeconds = seconds
  }
  const email = r.optObject('emailTemplate')
  if (email)
    changes.emailTemplate = {
      subject: email.string('subject', { max: 200 }),
      body: email.string('body', { max: 4000 }),
    }
  const sms = r.optObject('smsTemplate')
  if (sms) changes.smsTemplate = { body: sms.string('body', { max: 480 }) }
  const oauth = r.optObject('oauth')
  if (oauth) {
    const next: Partial<ProxySettings['oauth']> = {}
    if (oauth.has('redirectUrl')) {
      const redirect = oauth.string('redirectUrl', { min: 0, max: 2048 })
      if (redirect !== '' && !isUrl(redirect))
        throw new ServiceError(
          'FIELD_INVALID',
          `${oauth.field('redirectUrl')} must be an http(s) URL or empty`,
          oauth.field('redirectUrl'),
        )
      next.redirectUrl = redirect
    }
    const ids = oauth.optObject('clientIds')
    if (ids)
      next.clientIds = Object.fromEntries(
        OAUTH_METHODS.filter((m) => ids.has(m)).map((m) => [m, ids.string(m, { max: 512 })]),
      )
    const providers = oauth.optObject('providers')
    if (providers)
      next.providers = Object.fromEntries(
        OAUTH_METHODS.filter((m) => providers.has(m)).map((m) => {
          const p = providers.object(m)
          return [
            m,
            {
              issuer: p.string('issuer', { max: 2048 }),
              authorizationEndpoint: url(p, 'authorizationEndpoint'),
              tokenEndpoint: url(p, 'tokenEndpoint'),
              jwksUri: url(p, 'jwksUri'),
            },
          ]
        }),
      )
    changes.oauth = next as ProxySettings['oauth']
  }
  return changes
}

/**
 * The operator dashboard's authentication section, as an API stamped by a root user of a parent
 * organization (same stamp verification as the activity API):
 * `POST /dev/settings/get` `{ organizationId, timestampMs }` and
 * `POST /dev/settings/update` `{ organizationId, timestampMs, settings: Partial<ProxySettings> }`.
 */
export function settingsRoutes(app: Hono, service: Runtime): void {
  const authorise = async (headers: Headers, bytes: Uint8Array) => {
    const json = parseBody(bytes)
    const body = new Reader(json, '')
    const organizationId = body.string('organizationId', { max: 200 })
    const caller = await authenticate(service, headers, bytes, 'submit', organizationId)
    checkTimestamp(service, body)
    const organization = service.store.get('organizations', organizationId)
    if (!organization)
      throw new ServiceError(
        'ORGANIZATION_NOT_FOUND',
        `organization ${organizationId} not found`,
        'organizationId',
      )
    if (organization.parentOrganizationId !== undefined)
      throw new ServiceError(
        'PERMISSION_DENIED',
        'the auth proxy is configured on a parent organization',
        'organizationId',
      )
    if (
      caller.readOnly ||
      caller.organizationId !== organizationId ||
      !organization.rootUserIds.includes(caller.userId)
    )
      throw new ServiceError(
        'PERMISSION_DENIED',
        `only root users of organization ${organizationId} may manage its auth proxy`,
      )
    return { organizationId, body }
  }

  app.options('/dev/settings/*', (c) => c.body(null, 204, CORS))
  app.post(SETTINGS_ROUTES.get, async (c) => {
    try {
      const { organizationId } = await authorise(c.req.raw.headers, new Uint8Array(await c.req.arrayBuffer()))
      return c.json(
        render(organizationId, service.store.findBy('proxyConfigs', 'organizationId', organizationId)[0]),
        200,
        CORS,
      )
    } catch (error) {
      return failure(c, error)
    }
  })
  app.post(SETTINGS_ROUTES.update, async (c) => {
    try {
      const { organizationId, body } = await authorise(
        c.req.raw.headers,
        new Uint8Array(await c.req.arrayBuffer()),
      )
      const changes = readSettingsChanges(body.object('settings'))
      const row = await service.store.transaction((tx) =>
        saveProxyConfig(tx, service, organizationId, changes),
      )
      return c.json(render(organizationId, row), 200, CORS)
    } catch (error) {
      return failure(c, error)
    }
  })
}

function failure(
  c: { json: (body: unknown, status: 400, headers: Record<string, string>) => Response },
  error: unknown,
) {
  const serviceError =
    error instanceof ServiceError
      ? error
      : (() => {
          console.error('settings failure', error)
          return new ServiceError('INTERNAL', 'internal error')
        })()
  return c.json(serviceError.toBody(), serviceError.status as 400, CORS)
}
