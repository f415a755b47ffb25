import { OAUTH_METHODS, type OAuthMethod } from '@latchkey/protocol'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { Hono, type MiddlewareHandler } from 'hono'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { isEmailAddress } from '../../kernel/emailAddress.ts'
import { CODE_CHALLENGE, CODE_VERIFIER, s256Challenge } from './pkce.ts'

/** Where the dev identity providers are mounted on the service. */
export const DEV_OIDC_PREFIX = '/dev/oidc'

export interface DevIdpOptions {
  /** Epoch milliseconds. @default Date.now */
  now?: () => number
  /**
   * Public origin of the service, used for the issuer and endpoint URLs. When absent each
   * request's own origin is used, which is right for one service on one address.
   */
  baseUrl?: () => string | undefined
  /** Lifetime of an authorization code. @default 60 */
  codeLifetimeSeconds?: number
  /** Lifetime of an ID token. @default 600 */
  idTokenLifetimeSeconds?: number
  /** Most authorization codes pending at once; the oldest is dropped beyond it. @default 1000 */
  maxPendingCodes?: number
  /** Runs before every route: the service passes its local-only guard (loopback clients, allowed origins). */
  guard?: MiddlewareHandler
}

/** Longest accepted value of each authorization-request parameter (anything longer is refused). */
const PARAM_LIMITS: Record<string, number> = {
  response_type: 20,
  client_id: 512,
  redirect_uri: 2048,
  state: 1024,
  nonce: 512,
  code_challenge: 128,
  code_challenge_method: 10,
  scope: 512,
  login_hint: 320,
  prompt: 50,
  email: 320,
  name: 200,
  action: 20,
}

interface PendingCode {
  provider: OAuthMethod
  clientId: string
  redirectUri: string
  codeChallenge: string
  nonce?: string
  email: string
  name: string
  expiresAtMs: number
}

interface AuthorizeParams {
  responseType: string
  clientId: string
  redirectUri: string
  state?: string
  nonce?: string
  codeChallenge: string
  codeChallengeMethod: string
  scope: string
  loginHint: string
  prompt: string
}

const DISPLAY_NAMES: Record<OAuthMethod, string> = {
  google: 'Google',
  apple: 'Apple',
  facebook: 'Facebook',
  x: 'X',
  discord: 'Discord',
}

/** The dev IdP's stable subject for an e-mail: the same person signs in as the same `sub`. */
export function devSubject(provider: OAuthMethod, email: string): string {
  // Decimal like Google's subjects; 21 digits from the hash keep collisions out of reach.
  const digest = sha256(utf8ToBytes(`latchkey-dev-idp:${provider}:${email.toLowerCase()}`))
  return BigInt(`0x${bytesToHex(digest.slice(0, 12))}`)
    .toString()
    .padStart(21, '1')
    .slice(0, 21)
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  )

/** An absolute http(s) URL without a fragment (RFC 6749 §3.1.2). */
function isRedirectUri(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hash === ''
  } catch {
    return false
  }
}

function readAuthorizeParams(get: (name: string) => string | undefined): AuthorizeParams {
  const opt = (name: string) => {
    const v = get(name)
    return v === undefined || v === '' ? undefined : v
  }
  return {
    responseType: get('response_type') ?? '',
    clientId: get('client_id') ?? '',
    redirectUri: get('redirect_uri') ?? '',
    state: opt('state'),
    nonce: opt('nonce'),
    codeChallenge: get('code_challenge') ?? '',
    codeChallengeMethod: get('code_challenge_method') ?? '',
    scope: get('scope') ?? 'openid email profile',
    loginHint: get('login_hint') ?? '',
    prompt: get('prompt') ?? '',
  }
}

/** The first parameter longer than its limit, as a problem, or undefined. */
function tooLong(
  get: (name: string) => string | undefined,
): { error: string; description: string } | undefined {
  for (const [name, limit] of Object.entries(PARAM_LIMITS)) {
    const value = get(name)
    if (value !== undefined && value.length > limit)
      return { error: 'invalid_request', description: `${name} must be at most ${limit} characters` }
  }
  return undefined
}

/** The first problem with an authorization request, as an OAuth error code and text, or undefined. */
function authorizeProblem(p: AuthorizeParams): { error: string; description: string } | undefined {
  if (p.responseType !== 'code')
    return { error: 'unsupported_response_type', description: 'response_type must be "code"' }
  if (!p.clientId) return { error: 'invalid_request', description: 'client_id is required' }
  if (p.codeChallengeMethod !== 'S256')
    return { error: 'invalid_request', description: 'PKCE is required: code_challenge_method must be "S256"' }
  if (!CODE_CHALLENGE.test(p.codeChallenge))
    return {
      error: 'invalid_request',
      description: 'code_challenge must be a base64url SHA-256 (43 characters)',
    }
  return undefined
}

function page(title: string, main: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; min-height: 100vh; display: grid; place-items: center; background: #f4f4f5; color: #18181b; }
  @media (prefers-color-scheme: dark) { body { background: #18181b; color: #f4f4f5; } main { background: #27272a !important; } input { background: #18181b; color: inherit; } }
  main { background: #fff; padding: 2rem; border-radius: 12px; width: min(26rem, 92vw); box-shadow: 0 2px 12px rgb(0 0 0 / 0.12); }
  h1 { font-size: 1.3rem; margin: 0 0 0.25rem; }
  p { margin: 0 0 1rem; }
  label { display: block; font-weight: 600; margin: 0.75rem 0 0.25rem; }
  input { font: inherit; width: 100%; box-sizing: border-box; padding: 0.5rem; border: 1px solid #a1a1aa; border-radius: 6px; }
  .actions { display: flex; gap: 0.5rem; margin-top: 1.25rem; }
  button { font: inherit; padding: 0.5rem 1rem; border-radius: 6px; border: 1px solid #3f3f46; cursor: pointer; }
  button[value="continue"] { background: #1d4ed8; color: #fff; border-color: #1d4ed8; }
  [role="alert"] { color: #b91c1c; }
  :focus-visible { outline: 3px solid #2563eb; outline-offset: 2px; }
</style>
</head>
<body>
<main>
${main}
</main>
</body>
</html>`
}

function authorizePage(
  provider: OAuthMethod,
  p: AuthorizeParams,
  error?: string,
  values?: { email: string; name: string },
) {
  const hidden = (
    [
      ['response_type', p.responseType],
      ['client_id', p.clientId],
      ['redirect_uri', p.redirectUri],
      ['state', p.state],
      ['nonce', p.nonce],
      ['code_challenge', p.codeChallenge],
      ['code_challenge_method', p.codeChallengeMethod],
      ['scope', p.scope],
    ] as const
  )
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${escapeHtml(v ?? '')}">`)
    .join('\n  ')
  const email = values?.email ?? p.loginHint
  const name = values?.name ?? ''
  const host = (() => {
    try {
      return new URL(p.redirectUri).host
    } catch {
      return p.redirectUri
    }
  })()
  return page(
    `Sign in with ${DISPLAY_NAMES[provider]} (development)`,
    `<h1>Sign in with ${DISPLAY_NAMES[provider]}</h1>
<p>Development identity provider of the Latchkey local service. Type the account to sign in as; <strong>${escapeHtml(host)}</strong> will receive your e-mail address and name.</p>
${error ? `<p role="alert" id="form-error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="authorize"${error ? ' aria-describedby="form-error"' : ''}>
  ${hidden}
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(email)}"${error ? ' aria-invalid="true"' : ''} autofocus>
  <label for="name">Name</label>
  <input id="name" name="name" type="text" autocomplete="name" value="${escapeHtml(name)}">
  <div class="actions">
    <button type="submit" name="action" value="continue">Continue</button>
    <button type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
  </div>
</form>`,
  )
}

function errorPage(description: string) {
  return page(
    'Sign-in request refused',
    `<h1>This sign-in request cannot be used</h1>\n<p role="alert">${escapeHtml(description)}</p>`,
  )
}

function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri)
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v)
  return url.toString()
}

export type DevIdp = ReturnType<typeof createDevIdp>

/**
 * A small, standard OIDC identity provider for development, able to stand in for each OAuth
 * provider of the spec: discovery, an authorize page where a person types who to sign in as,
 * an authorization-code token endpoint with mandatory PKCE S256, JWKS, and ES256 ID tokens
 * carrying `nonce`. Mount `app` at `/dev/oidc`; each provider lives under `/<provider>/`.
 */
export function createDevIdp(options: DevIdpOptions = {}) {
  const now = options.now ?? Date.now
  const codeLifetime = options.codeLifetimeSeconds ?? 60
  const idTokenLifetime = options.idTokenLifetimeSeconds ?? 600
  // One signing key per process, made on first use (key generation is async in WebCrypto);
  // relying parties fetch the JWKS on every exchange, so a restart only voids pending codes.
  let signingKey: Promise<{ privateKey: CryptoKey; jwk: JWK }> | undefined
  const key = () => {
    signingKey ??= (async () => {
      const pair = await generateKeyPair('ES256')
      const jwk: JWK = { ...(await exportJWK(pair.publicKey)), alg: 'ES256', use: 'sig' }
      jwk.kid = bytesToHex(sha256(utf8ToBytes(`${jwk.x}${jwk.y}`)).slice(0, 8))
      return { privateKey: pair.privateKey, jwk }
    })()
    return signingKey
  }
  const maxPending = options.maxPendingCodes ?? 1000
  // Pending codes are memory an unauthenticated caller can grow: capped and expiring.
  const codes = new Map<string, PendingCode>()
  const remember = (code: string, pending: PendingCode) => {
    const at = now()
    for (const [key, value] of codes) if (value.expiresAtMs <= at) codes.delete(key)
    while (codes.size >= maxPending) codes.delete(codes.keys().next().value!)
    codes.set(code, pending)
  }

  const originOf = (requestUrl: string) => options.baseUrl?.() ?? new URL(requestUrl).origin
  const issuerOf = (origin: string, provider: OAuthMethod) => `${origin}${DEV_OIDC_PREFIX}/${provider}`

  const app = new Hono<{ Variables: { provider: OAuthMethod } }>()
  if (options.guard) app.use('*', options.guard)

  app.use('/:provider/*', async (c, next) => {
    const provider = c.req.param('provider') as OAuthMethod
    if (!OAUTH_METHODS.includes(provider))
      return c.json({ error: 'invalid_request', error_description: `unknown provider ${provider}` }, 404)
    c.set('provider', provider)
    await next()
  })

  app.get('/:provider/.well-known/openid-configuration', (c) => {
    const issuer = issuerOf(originOf(c.req.url), c.get('provider'))
    return c.json({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['openid', 'email', 'profile'],
      claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'nonce', 'email', 'email_verified', 'name'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    })
  })

  app.get('/:provider/jwks', async (c) => c.json({ keys: [(await key()).jwk] }))

  app.get('/:provider/authorize', (c) => {
    const long = tooLong((n) => c.req.query(n))
    if (long) return c.html(errorPage(long.description), 400)
    const params = readAuthorizeParams((n) => c.req.query(n))
    // A bad redirect URI must never be redirected to (RFC 6749 §4.1.2.1).
    if (!isRedirectUri(params.redirectUri))
      return c.html(errorPage('redirect_uri must be an absolute http(s) URL without a fragment'), 400)
    const problem = authorizeProblem(params)
    if (problem) return c.html(errorPage(problem.description), 400)
    return c.html(authorizePage(c.get('provider'), params))
  })

  app.post('/:provider/authorize', async (c) => {
    const form = await c.req.parseBody()
    const field = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : undefined)
    const long = tooLong(field)
    if (long) return c.html(errorPage(long.description), 400)
    const params = readAuthorizeParams(field)
    if (!isRedirectUri(params.redirectUri))
      return c.html(errorPage('redirect_uri must be an absolute http(s) URL without a fragment'), 400)
    const problem = authorizeProblem(params)
    if (problem) return c.html(errorPage(problem.description), 400)
    if (field('action') === 'cancel')
      return c.redirect(
        redirectWith(params.redirectUri, {
          error: 'access_denied',
          error_description: 'the user cancelled',
          state: params.state,
        }),
        302,
      )
    const email = (field('email') ?? '').trim().toLowerCase()
    const name = (field('name') ?? '').trim()
    if (!isEmailAddress(email))
      return c.html(
        authorizePage(c.get('provider'), params, 'Enter a valid e-mail address.', { email, name }),
        400,
      )
    const code = bytesToHex(crypto.getRandomValues(new Uint8Array(24)))
    remember(code, {
      provider: c.get('provider'),
      clientId: params.clientId,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      nonce: params.nonce,
      email,
      name: name || email.split('@')[0]!,
      expiresAtMs: now() + codeLifetime * 1000,
    })
    return c.redirect(redirectWith(params.redirectUri, { code, state: params.state }), 302)
  })

  app.post('/:provider/token', async (c) => {
    const tokenError = (error: string, description: string, status: 400 | 401 = 400) => {
      c.header('Cache-Control', 'no-store')
      return c.json({ error, error_description: description }, status)
    }
    const type = c.req.header('content-type') ?? ''
    let parsed: unknown
    try {
      parsed = type.includes('application/json') ? await c.req.json() : await c.req.parseBody()
    } catch {
      return tokenError('invalid_request', 'the body must be form-encoded')
    }
    // `null`, an array or a string is valid JSON but no token request.
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return tokenError('invalid_request', 'the body must be a form (or a JSON object)')
    const body = parsed as Record<string, unknown>
    const str = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : '')
    // client_secret_basic: the client id may come in the Authorization header.
    const basic = c.req.header('authorization')?.match(/^Basic\s+(.+)$/i)?.[1]
    const clientId = str('client_id') || (basic ? decodeURIComponent(atob(basic).split(':')[0] ?? '') : '')
    if (str('grant_type') !== 'authorization_code')
      return tokenError('unsupported_grant_type', 'grant_type must be authorization_code')
    const code = str('code')
    const pending = codes.get(code)
    // Single use: the code is spent by the first attempt, right or wrong (RFC 6749 §4.1.2).
    codes.delete(code)
    if (!pending || pending.provider !== c.get('provider'))
      return tokenError('invalid_grant', 'unknown or already used authorization code')
    if (now() >= pending.expiresAtMs) return tokenError('invalid_grant', 'the authorization code has expired')
    if (clientId !== pending.clientId) return tokenError('invalid_grant', 'client_id does not match the code')
    if (str('redirect_uri') !== pending.redirectUri)
      return tokenError('invalid_grant', 'redirect_uri does not match the authorization request')
    const verifier = str('code_verifier')
    if (!CODE_VERIFIER.test(verifier))
      return tokenError('invalid_grant', 'code_verifier is missing or malformed (PKCE)')
    if (s256Challenge(verifier) !== pending.codeChallenge)
      return tokenError('invalid_grant', 'code_verifier does not match the code_challenge (PKCE)')

    const { privateKey, jwk } = await key()
    const iat = Math.floor(now() / 1000)
    const idToken = await new SignJWT({
      email: pending.email,
      email_verified: true,
      name: pending.name,
      ...(pending.nonce !== undefined ? { nonce: pending.nonce } : {}),
    })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid!, typ: 'JWT' })
      .setIssuer(issuerOf(originOf(c.req.url), pending.provider))
      .setSubject(devSubject(pending.provider, pending.email))
      .setAudience(pending.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + idTokenLifetime)
      .sign(privateKey)
    c.header('Cache-Control', 'no-store')
    return c.json({
      access_token: bytesToHex(crypto.getRandomValues(new Uint8Array(24))),
      token_type: 'Bearer',
      expires_in: idTokenLifetime,
      scope: 'openid email profile',
      id_token: idToken,
    })
  })

  return {
    app,
    /** The issuer URL of `provider` when the service is reachable at `origin`. */
    issuer: (origin: string, provider: OAuthMethod) => issuerOf(origin, provider),
    /** The public key of the IdP's ID tokens. */
    jwk: async () => (await key()).jwk,
    /** How many authorization codes are waiting to be redeemed. */
    pendingCodes: () => codes.size,
  }
}
