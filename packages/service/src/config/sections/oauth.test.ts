import { describe, expect, it } from 'vitest'
import { createOAuthProviders } from '../../signin/oauth/createOAuthProviders.ts'
import { oauthOptions, oauthSection } from './oauth.ts'

const PEM = '-----BEGIN PRIVATE KEY-----\nMIG…\n-----END PRIVATE KEY-----\n'
const google = {
  client_id: 'id.apps.googleusercontent.com',
  client_secret: 'secret',
  redirect_uris: ['https://app.example.com/oauth/callback'],
}

const issues = (input: unknown) => {
  const result = oauthSection.safeParse(input)
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)
}

describe('the oauth config section', () => {
  it('maps providers, Apple keys and cache settings to CreateServiceOptions.oauth', () => {
    const parsed = oauthSection.parse({
      google,
      apple: {
        client_id: 'com.example.app',
        team_id: 'TEAM123456',
        key_id: 'KEY1234567',
        private_key: PEM,
        redirect_uris: ['https://app.example.com/oauth/callback'],
      },
      discord: {
        ...google,
        issuer: 'https://discord.example',
        token_endpoint_auth_method: 'client_secret_post',
      },
      cache_seconds: 600,
    })
    const options = oauthOptions(parsed)
    expect(options).toEqual({
      providers: {
        google: { clientId: google.client_id, clientSecret: 'secret', redirectUris: google.redirect_uris },
        apple: {
          clientId: 'com.example.app',
          appleKey: { teamId: 'TEAM123456', keyId: 'KEY1234567', privateKey: PEM },
          redirectUris: ['https://app.example.com/oauth/callback'],
        },
        discord: {
          clientId: google.client_id,
          clientSecret: 'secret',
          redirectUris: google.redirect_uris,
          issuer: 'https://discord.example',
          tokenEndpointAuthMethod: 'client_secret_post',
        },
      },
      timeoutMs: 10_000,
      cacheMs: 600_000,
      jwksRefetchFloorMs: 60_000,
    })
    // What the section lets through, the service starts with.
    const providers = createOAuthProviders({ oauth: options, fetch, devFetch: fetch, now: Date.now })
    expect(providers.devIdentityProvider).toBe(false)
    expect(providers.clientIds).toEqual({
      google: google.client_id,
      apple: 'com.example.app',
      discord: google.client_id,
    })
    expect(oauthOptions(oauthSection.parse({}))).toMatchObject({ providers: {} })
  })

  it('names each key it refuses', () => {
    expect(
      issues({
        google: { ...google, client_secret: undefined, redirect_uris: ['not a url'], colour: 'red' },
        apple: { client_id: 'com.example.app', team_id: 'TEAM123456', redirect_uris: google.redirect_uris },
        x: google,
        facebook: { ...google, token_endpoint_auth_method: 'private_key_jwt' },
        myspace: google,
        timeout_ms: 5,
      }),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^google: Unrecognized key: "colour"/),
        'google.redirect_uris.0: must be an http(s) URL (a redirect URI registered at the provider)',
        'apple.key_id: is required with team_id, key_id and private_key',
        'apple.private_key: is required with team_id, key_id and private_key',
        'x.issuer: is required: x has no well-known issuer',
        'facebook.token_endpoint_auth_method: must be client_secret_basic or client_secret_post',
        expect.stringMatching(/Unrecognized key: "myspace"/),
        'timeout_ms: must be a whole number of milliseconds from 100 to 60000',
      ]),
    )
    expect(issues({ google: { ...google, client_secret: undefined } })).toEqual([
      'google.client_secret: is required (inline, as client_secret_file, or in the env var)',
    ])
  })

  it('marks the secrets for redaction', () => {
    const shape = oauthSection.shape
    const inner = (method: 'google' | 'apple') =>
      (shape[method].unwrap() as unknown as { shape: Record<string, { meta(): unknown }> }).shape
    expect(inner('google').client_secret!.meta()).toMatchObject({
      secret: true,
      env: 'LATCHKEY_OAUTH_GOOGLE_CLIENT_SECRET',
    })
    expect(inner('apple').private_key!.meta()).toMatchObject({
      secret: true,
      env: 'LATCHKEY_OAUTH_APPLE_PRIVATE_KEY',
    })
  })
})
