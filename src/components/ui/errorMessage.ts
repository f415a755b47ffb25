import { NetworkError, TimeoutError } from '../../core/errors.ts'
import type { Translate } from '../i18n/strings.ts'
import type { UiKey } from './uiStrings.ts'

// Error codes (LatchkeyError.code, shared with the service) that have a message of their own.
const MESSAGE_OF: Partial<Record<string, UiKey>> = {
  OTP_INVALID: 'otpInvalid',
  OTP_EXPIRED: 'otpExpired',
  VERIFICATION_TOKEN_INVALID: 'otpExpired',
  OTP_ATTEMPTS_EXCEEDED: 'otpLocked',
  OTP_RATE_LIMITED: 'errorRateLimited',
  RATE_LIMITED: 'errorRateLimited',
  NETWORK_ERROR: 'errorNetwork',
  TIMEOUT: 'errorNetwork',
  NOT_SIGNED_IN: 'errorNotSignedIn',
  SESSION_EXPIRED: 'errorNotSignedIn',
  PUBLIC_KEY_NOT_FOUND: 'errorNotSignedIn',
  API_KEY_EXPIRED: 'errorNotSignedIn',
  PERMISSION_DENIED: 'errorPermission',
  PROXY_DISABLED: 'proxyDisabledBody',
  PROXY_CONFIG_NOT_FOUND: 'errorSetup',
  PROXY_CONFIG_MISSING: 'errorSetup',
  CONFIG_INVALID: 'errorSetup',
  ORIGIN_NOT_ALLOWED: 'errorOriginNotAllowed',
  METHOD_DISABLED: 'noMethodsBody',
  POPUP_BLOCKED: 'oauthBlockedBody',
  CONTACT_INVALID: 'emailInvalid',
  WALLET_UNAVAILABLE: 'walletNoneBody',
  FRAME_LOAD_FAILED: 'frameError',
  GAS_CAP_EXCEEDED: 'sendGasCapExceeded',
  // issue 37
  SPENDING_LIMIT_EXCEEDED: 'limitExceededGeneric',
  SPEND_UNDECODABLE: 'spendUndecodable',
  SPEND_DESTINATION_NOT_ALLOWED: 'spendDestinationNotAllowed',
}

// What a developer should do about a code (shown under the sentence in development builds only).
const HINT_OF: Partial<Record<string, UiKey>> = {
  PROXY_CONFIG_NOT_FOUND: 'devHintProxyConfig',
  PROXY_CONFIG_MISSING: 'devHintProxyConfig',
  ORIGIN_NOT_ALLOWED: 'devHintOrigin',
  NETWORK_ERROR: 'devHintNetwork',
  TIMEOUT: 'devHintNetwork',
  CONFIG_INVALID: 'devHintConfig',
}

/** The stable code of an error thrown by the client (`LatchkeyError.code`), if any. */
export const errorCodeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined

/**
 * True in a development build of the app. Vite, webpack, Next.js and esbuild replace
 * `process.env.NODE_ENV` at build time, in dependencies too (React relies on the same); where
 * nothing replaced it and `process` does not exist, it counts as production.
 */
export function isDevelopmentBuild(): boolean {
  try {
    return process.env.NODE_ENV !== 'production'
  } catch {
    return false
  }
}

/**
 * A WebAuthn call refused because the page is on an IP address (passkeys need a domain name):
 * @simplewebauthn/browser's `ERROR_INVALID_DOMAIN`, or the browser's own `SecurityError`.
 */
function isPasskeyDomainError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { code, name, cause } = error as { code?: unknown; name?: unknown; cause?: { name?: unknown } }
  if (code === 'ERROR_INVALID_DOMAIN') return true
  return (name === 'SecurityError' || cause?.name === 'SecurityError') && onIpAddress()
}

const onIpAddress = () =>
  typeof location !== 'undefined' && /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i.test(location.hostname)

/** This page's URL on `localhost` instead of its IP address. */
const localhostUrl = () => {
  if (typeof location === 'undefined') return 'http://localhost'
  const url = new URL(location.href)
  url.hostname = 'localhost'
  return url.origin
}

const detailOf = (error: unknown, key: string) => {
  const details = (error as { details?: Record<string, unknown> } | null)?.details
  return typeof details?.[key] === 'string' ? (details[key] as string) : undefined
}

// Each error is logged once, however often the component showing it renders.
const logged = new WeakSet<object>()

/**
 * Logs an error with its code to the console as a warning (the UI already handles it), once per
 * error object, in every build.
 */
export function logError(error: unknown): void {
  if (typeof error !== 'object' || error === null || logged.has(error)) return
  logged.add(error)
  const code = errorCodeOf(error)
  console.warn(`[latchkey]${code ? ` ${code}` : ''}:`, error)
}

/**
 * An error's message in the kit's words. `text` is the kit's own (its `backticks` and http(s) URLs
 * are markup, see `MessageText`); its `{code}`, `{field}` and `{url}` markers are what the error
 * carries, in `values`, to be shown as plain text: a service's code and details are its own words,
 * never markup in the kit's sentence. Only a URL the kit itself requested (a `NetworkError`'s, a
 * `TimeoutError`'s) is written into `text`, where it is a link.
 */
export interface ErrorWords {
  text: string
  values: { code: string; field: string; url: string }
}

/**
 * A calm, translated sentence for an error; never the raw service message (it may be English or
 * technical). An error that is not the person's own slip goes to the console with its code (in
 * every build) and, in development builds, the sentence is followed by its code and what to fix.
 */
export function errorWords(t: Translate<UiKey>, error: unknown): ErrorWords {
  const values = { code: '', field: '', url: '' }
  if (isPasskeyDomainError(error)) {
    logError(error)
    return { text: t('passkeyNeedsDomain', { url: localhostUrl() }), values }
  }
  const code = errorCodeOf(error)
  const key = code ? MESSAGE_OF[code] : undefined
  const sentence = t(key ?? 'errorGeneric')
  // A person's own slip (wrong code, bad e-mail) already has its sentence; the rest say why, and
  // go to the console.
  const hintKey = code ? (HINT_OF[code] ?? (key ? undefined : 'devHintConsole')) : undefined
  if (hintKey !== undefined || code === undefined) logError(error)
  if (!isDevelopmentBuild() || code === undefined || hintKey === undefined) return { text: sentence, values }
  const url = detailOf(error, 'url')
  const own = error instanceof NetworkError || error instanceof TimeoutError
  const hint = own && url ? t(hintKey, { url: new URL(url).origin }) : t(hintKey)
  return {
    text: `${sentence} ({code}) ${hint}`,
    values: {
      code,
      field: (error as { field?: string }).field ?? detailOf(error, 'field') ?? '',
      url: url ?? '',
    },
  }
}

/** `errorWords` as one string (its markers filled). */
export function errorMessage(t: Translate<UiKey>, error: unknown): string {
  const { text, values } = errorWords(t, error)
  return fillMarkers(text, values)
}

/** `text` with each `{name}` marker that `values` has replaced by its value (once: values are not read again). */
export const fillMarkers = (text: string, values: Readonly<Record<string, string>>): string =>
  text.replace(/\{(\w+)\}/g, (marker, name: string) => (Object.hasOwn(values, name) ? values[name]! : marker))
