import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'

export interface OidcClient {
  client_id: string
  client_secret: string
  redirect_uris: string[]
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post'
}

export interface AuthorizeParameters {
  clientId: string
  redirectUri: string
  nonce: string
  codeChallenge: string
  /** @default 'openid email' */
  scope?: string
}

/**
 * A real OpenID Connect provider (oidc-provider) on a loopback port, for confidential clients:
 * ES256 ID tokens carrying the scope's claims, PKCE S256, and a login step that signs in whichever
 * account `authorize` names (no page to fill in).
 */
export interface OidcProviderOptions {
  /** `kid` of the signing key. @default 'provider-key-1' */
  keyId?: string
  /**
   * The account's claims besides `sub`, as the provider puts them in its ID tokens (a provider
   * that sends no `email_verified`, or sends it as a string, leaves it out or spells it so).
   * @default { email: `${accountId}@example.com`, email_verified: true }
   */
  accountClaims?: (accountId: string) => Record<string, unknown>
}

export async function startOidcProvider(clients: OidcClient[], options: OidcProviderOptions = {}) {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const signingKey = {
    ...(await exportJWK(privateKey)),
    kid: options.keyId ?? 'provider-key-1',
    alg: 'ES256',
    use: 'sig',
  }
  let account = 'ada'
  const provider = new Provider(issuer, {
    clients: clients.map((client) => ({
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: 'ES256',
      ...client,
    })),
    jwks: { keys: [signingKey] },
    features: { devInteractions: { enabled: false } },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The scope's claims in the ID token itself, as Google and Apple put them.
    conformIdTokenClaims: false,
    findAccount: (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: () => ({
        ...(options.accountClaims?.(sub) ?? { email: `${sub}@example.com`, email_verified: true }),
        sub,
      }),
    }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    // Consent is taken as given: the grant covers whatever scope the request asked for.
    loadExistingGrant: async (ctx: {
      oidc: {
        provider: { Grant: new (init: object) => { addOIDCScope(s: string): void; save(): Promise<string> } }
        client: { clientId: string }
        session: { accountId: string }
        params: { scope?: string }
      }
    }) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      })
      grant.addOIDCScope(ctx.oidc.params.scope ?? 'openid')
      await grant.save()
      return grant
    },
    pkce: { required: () => true },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Grant: 600,
      Interaction: 600,
      Session: 600,
    },
    cookies: { keys: ['oidc-provider-test-cookie-key'] },
  })
  const callback = provider.callback()
  let tokenRequests = 0
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      provider
        .interactionFinished(req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false })
        .catch((error: Error) => {
          res.statusCode = 500
          res.end(error.message)
        })
      return
    }
    if (req.url?.startsWith('/token')) tokenRequests++
    callback(req, res)
  })

  /** Signs `accountId` in as a browser would (cookies, redirects) and returns the code. */
  async function authorize(parameters: AuthorizeParameters, accountId = 'ada'): Promise<string> {
    account = accountId
    const cookies = new Map<string, string>()
    let url = `${issuer}/auth?${new URLSearchParams({
      response_type: 'code',
      client_id: parameters.clientId,
      redirect_uri: parameters.redirectUri,
      scope: parameters.scope ?? 'openid email',
      state: 'state-1',
      nonce: parameters.nonce,
      code_challenge: parameters.codeChallenge,
      code_challenge_method: 'S256',
    })}`
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
      })
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';')
        const at = pair!.indexOf('=')
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1))
      }
      const location = response.headers.get('location')
      if (!location) throw new Error(`the provider answered ${response.status}: ${await response.text()}`)
      const next = new URL(location, url)
      if (next.href.startsWith(parameters.redirectUri)) {
        const code = next.searchParams.get('code')
        if (!code) throw new Error(`the provider refused: ${next.searchParams.get('error_description')}`)
        return code
      }
      url = next.href
    }
    throw new Error('the provider redirected too many times')
  }

  return {
    issuer,
    signingKey,
    authorize,
    /** Token requests the provider has served. */
    get tokenRequests() {
      return tokenRequests
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export type OidcProvider = Awaited<ReturnType<typeof startOidcProvider>>
