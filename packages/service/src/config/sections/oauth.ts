import { OAUTH_METHODS, type OAuthMethod } from '@latchkey/protocol'
import { z } from 'zod'
import {
  type OAuthOptions,
  type OAuthProviderConfig,
  WELL_KNOWN_ISSUERS,
} from '../../signin/oauth/OAuthProviderConfig.ts'

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

const url = (what: string) =>
  z
    .string({ error: `must be an http(s) URL (${what})` })
    .refine(isHttpUrl, { error: `must be an http(s) URL (${what})` })

const envName = (method: OAuthMethod, key: string) =>
  `LATCHKEY_OAUTH_${method.toUpperCase()}_${key.toUpperCase()}`

function providerSchema(method: OAuthMethod) {
  const issuer = WELL_KNOWN_ISSUERS[method]
  return z
    .strictObject({
      client_id: z
        .string({ error: 'must be the client id the provider issued (a string)' })
        .min(1, { error: 'must not be empty' })
        .describe(`The client id ${method} issued to your app (the \`aud\` of its ID tokens).`),
      client_secret: z
        .string({ error: 'must be a string' })
        .min(1, { error: 'must not be empty' })
        .optional()
        .meta({ secret: true, env: envName(method, 'client_secret') })
        .describe(
          method === 'apple'
            ? 'A client-secret JWT made elsewhere; usually leave it out and give `team_id`, `key_id` and `private_key`, from which the service signs one itself.'
            : `The client secret ${method} issued to your app. Give it as \`client_secret_file\` or the env var, not inline.`,
        ),
      ...(method === 'apple'
        ? {
            team_id: z
              .string({ error: 'must be your Apple developer team id (a string)' })
              .regex(/^[A-Z0-9]{10}$/, { error: 'must be a 10-character Apple team id' })
              .optional()
              .describe('Your Apple developer team id (the `iss` of the client-secret JWT).'),
            key_id: z
              .string({ error: 'must be the Sign in with Apple key id (a string)' })
              .regex(/^[A-Z0-9]{10}$/, { error: 'must be a 10-character Apple key id' })
              .optional()
              .describe('Id of your Sign in with Apple key (the `kid` of the client-secret JWT).'),
            private_key: z
              .string({ error: 'must be a PKCS#8 PEM private key (a string)' })
              .refine((value) => value.includes('-----BEGIN PRIVATE KEY-----'), {
                error:
                  'must be a PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----, the .p8 file Apple gives)',
              })
              .optional()
              .meta({ secret: true, env: envName(method, 'private_key') })
              .describe(
                "The Sign in with Apple key (the `.p8` file's PEM). Give it as `private_key_file` or the env var.",
              ),
          }
        : {}),
      redirect_uris: z
        .array(url('a redirect URI registered at the provider'), { error: 'must be a list of URLs' })
        .min(1, { error: 'must list at least one redirect URI' })
        .describe(
          'Redirect URIs registered at the provider for this client; an exchange naming another is refused.',
        ),
      issuer: url('the provider issuer')
        .optional()
        .describe(
          issuer
            ? `The provider's issuer, where discovery is read. Default: \`${issuer}\`.`
            : "The provider's OpenID Connect issuer, where discovery is read (required: it has no well-known one).",
        ),
      authorization_endpoint: url('the authorization endpoint')
        .optional()
        .describe("Overrides discovery's `authorization_endpoint`."),
      token_endpoint: url('the token endpoint')
        .optional()
        .describe("Overrides discovery's `token_endpoint`."),
      jwks_uri: url('the JWKS URI').optional().describe("Overrides discovery's `jwks_uri`."),
      token_endpoint_auth_method: z
        .enum(['client_secret_basic', 'client_secret_post'], {
          error: 'must be client_secret_basic or client_secret_post',
        })
        .optional()
        .describe(
          'How the service authenticates at the token endpoint. Default: `client_secret_post` when discovery lists only that (Apple), else `client_secret_basic`.',
        ),
    })
    .superRefine((value, ctx) => {
      const apple = value as { team_id?: string; key_id?: string; private_key?: string }
      const appleKey = [apple.team_id, apple.key_id, apple.private_key]
      if (
        method === 'apple' &&
        appleKey.some((v) => v !== undefined) &&
        appleKey.some((v) => v === undefined)
      )
        for (const key of ['team_id', 'key_id', 'private_key'] as const)
          if (apple[key] === undefined)
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: 'is required with team_id, key_id and private_key',
            })
      if (value.client_secret === undefined && (method !== 'apple' || apple.private_key === undefined))
        ctx.addIssue({
          code: 'custom',
          path: [method === 'apple' ? 'private_key' : 'client_secret'],
          message:
            method === 'apple'
              ? 'is required (with team_id and key_id), or a client_secret'
              : 'is required (inline, as client_secret_file, or in the env var)',
        })
      if (!issuer && value.issuer === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['issuer'],
          message: `is required: ${method} has no well-known issuer`,
        })
    })
    .optional()
    .describe(`Sign-in with ${method} (a confidential OpenID Connect client).`)
}

export const oauthSection = z
  .strictObject({
    ...(Object.fromEntries(OAUTH_METHODS.map((method) => [method, providerSchema(method)])) as {
      [M in OAuthMethod]: ReturnType<typeof providerSchema>
    }),
    dev_identity_provider: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe(
        'Serve the dev identity provider (`/dev/oidc/*`) for methods without a provider. Default: only when no provider is configured. `start` never serves it.',
      ),
    timeout_ms: z
      .int({ error: 'must be a whole number of milliseconds from 100 to 60000' })
      .min(100, { error: 'must be a whole number of milliseconds from 100 to 60000' })
      .max(60_000, { error: 'must be a whole number of milliseconds from 100 to 60000' })
      .default(10_000)
      .describe(
        'Longest wait for one call to a provider (discovery, JWKS, token endpoint), in milliseconds.',
      ),
    cache_seconds: z
      .int({ error: 'must be a whole number of seconds from 0 to 86400' })
      .min(0, { error: 'must be a whole number of seconds from 0 to 86400' })
      .max(86_400, { error: 'must be a whole number of seconds from 0 to 86400' })
      .default(3600)
      .describe(
        'How long discovery documents and key sets are kept when the provider sends no `Cache-Control` max-age (a max-age is honoured up to a day).',
      ),
    jwks_refetch_floor_seconds: z
      .int({ error: 'must be a whole number of seconds from 0 to 3600' })
      .min(0, { error: 'must be a whole number of seconds from 0 to 3600' })
      .max(3600, { error: 'must be a whole number of seconds from 0 to 3600' })
      .default(60)
      .describe(
        'Shortest time between two key-set reads forced by an ID token whose `kid` the cached set lacks (a key rotation).',
      ),
  })
  .describe('OAuth sign-in providers: google, apple, facebook, x, discord.')

export type OAuthSection = z.infer<typeof oauthSection>

/** `CreateServiceOptions.oauth` from the section. */
export function oauthOptions(parsed: OAuthSection): OAuthOptions {
  const providers: Partial<Record<OAuthMethod, OAuthProviderConfig>> = {}
  for (const method of OAUTH_METHODS) {
    const entry = parsed[method] as
      | (NonNullable<OAuthSection[OAuthMethod]> & { team_id?: string; key_id?: string; private_key?: string })
      | undefined
    if (!entry) continue
    providers[method] = {
      clientId: entry.client_id,
      redirectUris: [...entry.redirect_uris],
      ...(entry.client_secret !== undefined ? { clientSecret: entry.client_secret } : {}),
      ...(entry.private_key !== undefined && entry.team_id !== undefined && entry.key_id !== undefined
        ? { appleKey: { teamId: entry.team_id, keyId: entry.key_id, privateKey: entry.private_key } }
        : {}),
      ...(entry.issuer !== undefined ? { issuer: entry.issuer } : {}),
      ...(entry.authorization_endpoint !== undefined
        ? { authorizationEndpoint: entry.authorization_endpoint }
        : {}),
      ...(entry.token_endpoint !== undefined ? { tokenEndpoint: entry.token_endpoint } : {}),
      ...(entry.jwks_uri !== undefined ? { jwksUri: entry.jwks_uri } : {}),
      ...(entry.token_endpoint_auth_method !== undefined
        ? { tokenEndpointAuthMethod: entry.token_endpoint_auth_method }
        : {}),
    }
  }
  return {
    providers,
    ...(parsed.dev_identity_provider !== undefined
      ? { devIdentityProvider: parsed.dev_identity_provider }
      : {}),
    timeoutMs: parsed.timeout_ms,
    cacheMs: parsed.cache_seconds * 1000,
    jwksRefetchFloorMs: parsed.jwks_refetch_floor_seconds * 1000,
  }
}
