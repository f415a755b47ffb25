import {
  type AuthProxySettingsResponse,
  OAUTH_METHODS,
  type ProxySettings,
  SIGN_IN_METHODS,
  STAMP_HEADER,
  WEBAUTHN_STAMP_HEADER,
} from '@latchkey/protocol'
import { Hono } from 'hono'
import { MAX_SESSION_SECONDS } from '../../domain/sessions.ts'
import { FieldError, PermissionError } from '../../kernel/base/errors.ts'
import { requestFingerprint } from '../../kernel/Caller.ts'
import { Reader, stringItem } from '../../kernel/Reader.ts'
import type { Runtime } from '../../kernel/Runtime.ts'
import type { ProxyConfigRow } from '../../kernel/store/model.ts'
import { authenticate } from '../../pipeline/authenticate.ts'
import { checkTimestamp } from '../../pipeline/checkTimestamp.ts'
import { localOnly } from '../../pipeline/originPolicy.ts'
import { type PipelineEnv, readJson } from '../../pipeline/readJson.ts'
import { requireOrganization } from '../../pipeline/requireOrganization.ts'
import { defaultProxySettings } from '../defaultProxySettings.ts'
import { saveProxyConfig } from '../proxyConfig.ts'
import { spendOnce } from '../spendOnce.ts'

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
  if (!isUrl(value)) throw new FieldError({ field: r.field(name), reason: 'must be an http(s) URL' })
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
      throw new FieldError({
        field: r.field('allowedOrigins'),
        reason: `holds ${JSON.stringify(bad)}: use "*" or origins like https://app.example.com (no path)`,
      })
    changes.allowedOrigins = [...new Set(origins)]
  }
  const providers = r.optArray(
    'enabledProviders',
    (value, field) => {
      if (!SIGN_IN_METHODS.includes(value as never))
        throw new FieldError({
          code: 'ENUM_INVALID',
          field,
          reason: `must be one of ${SIGN_IN_METHODS.join(', ')}`,
        })
      return value as (typeof SIGN_IN_METHODS)[number]
    },
    { max: SIGN_IN_METHODS.length },
  )
  if (providers) changes.enabledProviders = SIGN_IN_METHODS.filter((m) => providers.includes(m))
  const seconds = r.optUintString('sessionExpirationSeconds', { max: MAX_SESSION_SECONDS })
  if (seconds !== undefined) {
    if (Number(seconds) < 60)
      throw new FieldError({ field: r.field('sessionExpirationSeconds'), reason: 'must be at least 60' })
    changes.sessionExpirationSeconds = seconds
  }
  const maxSeconds = r.optUintString('maxSessionExpirationSeconds', { max: MAX_SESSION_SECONDS })
  if (maxSeconds !== undefined) {
    if (Number(maxSeconds) < 60)
      throw new FieldError({ field: r.field('maxSessionExpirationSeconds'), reason: 'must be at least 60' })
    changes.maxSessionExpirationSeconds = maxSeconds
  }
  const otpSeconds = r.optUintString('otpExpirationSeconds', { max: 3600 })
  if (otpSeconds !== undefined) {
    if (Number(otpSeconds) < 30)
      throw new FieldError({ field: r.field('otpExpirationSeconds'), reason: 'must be from 30 to 3600' })
    changes.otpExpirationSeconds = otpSeconds
  }
  const otpLength = r.optInt('otpLength', { min: 6, max: 9 })
  if (otpLength !== undefined) changes.otpLength = otpLength
  if (r.has('otpAlphabet')) {
    const alphabet = r.string('otpAlphabet', { max: 20 })
    if (alphabet !== 'digits' && alphabet !== 'alphanumeric')
      throw new FieldError({
        code: 'ENUM_INVALID',
        field: r.field('otpAlphabet'),
        reason: 'must be digits or alphanumeric',
      })
    changes.otpAlphabet = alphabet
  }
  if (r.has('appName')) changes.appName = r.string('appName', { max: 100 })
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
        throw new FieldError({ field: oauth.field('redirectUrl'), reason: 'must be an http(s) URL or empty' })
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

type SettingsEnv = PipelineEnv & {
  Variables: PipelineEnv['Variables'] & {
    organizationId: string
    body: Reader
    fingerprint: string
    /** The session profile confining the caller's key, if it was issued under one. */
    sessionProfileId: string | undefined
  }
}

/**
 * The operator dashboard's authentication section, mounted at `/dev/settings`: an API stamped by
 * a root user of a parent organization (same stamp verification and liveness as the activity API):
 * `POST /get` `{ organizationId, timestampMs }` and
 * `POST /update` `{ organizationId, timestampMs, settings: Partial<ProxySettings> }`.
 * Like the activity API, an update is accepted once: its fingerprint (signing key + exact bytes) is
 * spent in the transaction that applies it, so a captured request replayed within the timestamp
 * window is refused, and one replayed later is stale. Loopback clients and allowed origins only.
 */
export function settingsApp(runtime: Runtime): Hono<SettingsEnv> {
  const app = new Hono<SettingsEnv>()
  app.use(
    '*',
    localOnly(runtime, {
      methods: ['POST'],
      headers: ['Content-Type', 'Accept', STAMP_HEADER, WEBAUTHN_STAMP_HEADER],
    }),
  )
  // Only a root user of the parent organization the body names, with a live stamp.
  app.use('*', async (c, next) => {
    const { bytes, json } = await readJson(c)
    const body = new Reader(json, '')
    const organizationId = body.string('organizationId', { max: 200 })
    const caller = await authenticate(runtime, {
      headers: c.req.raw.headers,
      bytes,
      route: 'submit',
      organizationId,
    })
    checkTimestamp(runtime, body)
    const organization = await requireOrganization(runtime.store, organizationId)
    if (organization.parentOrganizationId !== undefined)
      throw new PermissionError({
        field: 'organizationId',
        message: 'the auth proxy is configured on a parent organization',
      })
    if (
      caller.readOnly ||
      caller.organizationId !== organizationId ||
      !organization.rootUserIds.includes(caller.userId)
    )
      throw new PermissionError({
        message: `only root users of organization ${organizationId} may manage its auth proxy`,
      })
    c.set('organizationId', organizationId)
    c.set('body', body)
    c.set('sessionProfileId', caller.credential.sessionProfileId)
    c.set('fingerprint', requestFingerprint(caller.credential, bytes))
    await next()
  })
  app.post('/get', async (c) => {
    const organizationId = c.get('organizationId')
    return c.json(
      render(
        organizationId,
        (await runtime.store.findBy('proxyConfigs', 'organizationId', organizationId))[0],
      ),
    )
  })
  app.post('/update', async (c) => {
    const organizationId = c.get('organizationId')
    // A session issued under a session profile never manages logins, sessions or the organization
    // (the activity API confines it so); the proxy's methods, session lifetime and OAuth endpoints
    // are all three, so its root user's confined session may read them but not change them.
    const sessionProfileId = c.get('sessionProfileId')
    if (sessionProfileId !== undefined)
      throw new PermissionError({
        code: 'SESSION_SCOPE_DENIED',
        message: `a session of session profile ${sessionProfileId} may not change the auth proxy's settings`,
        extra: { sessionProfileId },
      })
    const body = c.get('body').object('settings')
    const changes = readSettingsChanges(body)
    const row = await runtime.store.transaction(async (tx) => {
      const now = runtime.now()
      // Spent fingerprints older than the timestamp window can never match a live request again.
      const horizon = now - 2 * runtime.options.maxTimestampSkewMs
      for (const spent of await tx.findBy('pluginRows', 'kind', 'settings-request'))
        if (spent.createdAt < horizon) await tx.delete('pluginRows', spent.id)
      await spendOnce({ tx, now }, 'settings-request', c.get('fingerprint'), {
        errorCode: 'STAMP_INVALID',
        message: 'this signed settings update was already applied; sign a new request (replays are refused)',
      })
      const saved = await saveProxyConfig(tx, runtime, organizationId, changes)
      // The default a login gets when it asks for nothing stays within the ceiling (the field
      // named is the one this update changed; the ceiling when it changed both).
      const { sessionExpirationSeconds, maxSessionExpirationSeconds } = saved.settings
      if (
        maxSessionExpirationSeconds !== undefined &&
        Number(sessionExpirationSeconds) > Number(maxSessionExpirationSeconds)
      )
        throw new FieldError({
          field: body.field(
            changes.maxSessionExpirationSeconds !== undefined
              ? 'maxSessionExpirationSeconds'
              : 'sessionExpirationSeconds',
          ),
          reason: `leaves the default session (${sessionExpirationSeconds} s) longer than the longest allowed (${maxSessionExpirationSeconds} s)`,
        })
      return saved
    })
    return c.json(render(organizationId, row))
  })
  return app
}
