import {
  CORS_ALLOWED_HEADERS,
  PROXY_CONFIG_HEADER,
  PROXY_PATHS,
  type ProxyPath,
  type ProxyResponse,
} from '@latchkey/protocol'
import { type Context, Hono, type MiddlewareHandler } from 'hono'
import { FieldError, NotConfiguredError, NotFoundError, PermissionError } from '../../kernel/base/errors.ts'
import { Reader } from '../../kernel/Reader.ts'
import type { Runtime } from '../../kernel/Runtime.ts'
import type { ProxyConfigRow } from '../../kernel/store/model.ts'
import { corsGrant } from '../../pipeline/corsGrant.ts'
import { clientAddress } from '../../pipeline/originPolicy.ts'
import { rateLimitClient } from '../../pipeline/rateLimit.ts'
import { type PipelineEnv, parseJsonObject, readBytes } from '../../pipeline/readJson.ts'
import { signInState } from '../signInState.ts'
import { account } from './account.ts'
import { oauth2Authenticate } from './oauth2Authenticate.ts'
import { oauthLogin } from './oauthLogin.ts'
import { otpInit } from './otpInit.ts'
import { otpInitV2 } from './otpInitV2.ts'
import { otpLogin } from './otpLogin.ts'
import { otpLoginV2 } from './otpLoginV2.ts'
import { otpVerify } from './otpVerify.ts'
import { otpVerifyV2 } from './otpVerifyV2.ts'
import { ProxyCall } from './ProxyCall.ts'
import { signup } from './signup.ts'
import { signupV2 } from './signupV2.ts'
import { walletKitClientParams } from './walletKitClientParams.ts'
import { walletKitConfig } from './walletKitConfig.ts'

type ProxyEnv = PipelineEnv & { Variables: PipelineEnv['Variables'] & { proxyConfig: ProxyConfigRow } }

/** One route of the proxy: its parsed body in, its response out. */
type ProxyRoute<P extends ProxyPath> = (
  call: ProxyCall,
  body: Reader,
) => Promise<ProxyResponse<P>> | ProxyResponse<P>

const ROUTES: { [P in ProxyPath]: ProxyRoute<P> } = {
  otp_init: otpInit,
  otp_verify: otpVerify,
  otp_login: otpLogin,
  oauth2_authenticate: oauth2Authenticate,
  oauth_login: oauthLogin,
  account,
  signup,
  wallet_kit_config: walletKitConfig,
  wallet_kit_client_params: walletKitClientParams,
  otp_init_v2: otpInitV2,
  otp_verify_v2: otpVerifyV2,
  otp_login_v2: otpLoginV2,
  signup_v2: signupV2,
}

/** Access-Control-* headers granting `origin`. */
const grant = corsGrant({ methods: ['POST', 'OPTIONS'], headers: CORS_ALLOWED_HEADERS })

function revoke(c: Context): void {
  for (const name of ['Allow-Origin', 'Allow-Methods', 'Allow-Headers', 'Max-Age'])
    c.header(`Access-Control-${name}`, undefined)
}

const allows = (config: ProxyConfigRow, origin: string | undefined) =>
  config.settings.allowedOrigins.includes('*') ||
  (origin !== undefined && config.settings.allowedOrigins.includes(origin))

/** Top-level snake_case keys also accepted in camelCase (and the other way round). */
function camelizeKeys(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body }
  for (const [key, value] of Object.entries(body)) {
    if (!key.includes('_')) continue
    const camel = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
    if (out[camel] === undefined) out[camel] = value
    delete out[key]
  }
  return out
}

/**
 * The budget, configuration and origin checks of every proxy call. A preflight carries no config
 * id, so it is granted to origins some enabled configuration allows; the call itself is charged
 * to its client address's budget (the sign-in wing's `rateLimits.perClientAddress`), must name
 * its configuration (`X-Auth-Proxy-Config-Id`), come from one of its allowed origins, and find
 * the proxy switched on. Errors keep the CORS grant when the origin may read them.
 */
function proxyConfiguration(runtime: Runtime): MiddlewareHandler<ProxyEnv> {
  const { rateLimits } = signInState(runtime).options
  const preflightAllows = async (origin: string | undefined) =>
    origin !== undefined &&
    (await runtime.store.all('proxyConfigs')).some((config) => config.enabled && allows(config, origin))
  return async (c, next) => {
    const origin = c.req.header('origin')
    if (c.req.method === 'OPTIONS') {
      if (!(await preflightAllows(origin)))
        throw new PermissionError({
          code: 'ORIGIN_NOT_ALLOWED',
          message: `origin ${origin?.slice(0, 200) ?? '(none)'} is not allowed`,
        })
      grant(c, origin!)
      return c.body(null, 204)
    }
    if (await preflightAllows(origin)) grant(c, origin!)
    // Anonymous calls are budgeted by where they come from: the proxy user they are forwarded as
    // spends no organization's budget (pipeline/rateLimit.ts).
    await rateLimitClient(runtime, rateLimits, clientAddress(c))
    const configId = c.req.header(PROXY_CONFIG_HEADER)
    if (!configId)
      throw new FieldError({
        code: 'PROXY_CONFIG_MISSING',
        message: `the ${PROXY_CONFIG_HEADER} header is required`,
      })
    const config = await runtime.store.get('proxyConfigs', configId)
    if (!config)
      throw new NotFoundError({
        code: 'PROXY_CONFIG_NOT_FOUND',
        message: `no auth-proxy configuration ${configId.slice(0, 100)}`,
      })
    if (!allows(config, origin)) {
      revoke(c)
      throw new PermissionError({
        code: 'ORIGIN_NOT_ALLOWED',
        message: `origin ${origin?.slice(0, 200) ?? '(none)'} is not in this configuration's allowed origins`,
      })
    }
    if (origin) grant(c, origin)
    if (!config.enabled || !config.proxyUserId || !config.sealedProxyPrivateKey)
      throw new NotConfiguredError({
        code: 'PROXY_DISABLED',
        message: 'the auth proxy is switched off for this organization',
      })
    c.set('proxyConfig', config)
    await next()
  }
}

/**
 * The auth proxy, mounted at `/v1`: each call is checked against its configuration, then
 * forwarded to the activity API as the proxy user (see `ProxyCall`), one route a file.
 * `app` is the whole service, whose public routes the forwarded calls go through.
 */
export function proxyApp(app: Hono<PipelineEnv>, runtime: Runtime): Hono<ProxyEnv> {
  const proxy = new Hono<ProxyEnv>()
  proxy.use('*', proxyConfiguration(runtime))
  proxy.post('/:path', async (c) => {
    const path = c.req.param('path') as ProxyPath
    if (!PROXY_PATHS.includes(path))
      throw new NotFoundError({ code: 'ROUTE_NOT_FOUND', message: `no proxy route /v1/${path.slice(0, 80)}` })
    const bytes = await readBytes(
      c.req.raw,
      c.get('bodyLimit'),
      (c.env as { incoming?: unknown } | undefined)?.incoming,
    )
    const body = bytes.length === 0 ? {} : parseJsonObject(bytes)
    const call = new ProxyCall(app, runtime, c.get('proxyConfig'), c)
    const route = ROUTES[path] as ProxyRoute<ProxyPath>
    return c.json(await route(call, new Reader(camelizeKeys(body), '')))
  })
  return proxy
}
