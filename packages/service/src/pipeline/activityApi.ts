import { CORS_ALLOWED_HEADERS } from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { Hono } from 'hono'
import { publicJwk } from '../kernel/crypto/index.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { Registry } from '../kernel/registry.ts'
import { corsGrant } from './corsGrant.ts'
import { hostAllowed, hostRefusal, originAllowed, requestHost } from './originPolicy.ts'
import type { PipelineOptions } from './RateLimitOptions.ts'
import type { PipelineEnv } from './readJson.ts'
import { readJson } from './readJson.ts'
import { runQuery } from './runQuery.ts'
import { submitActivity } from './submitActivity.ts'

/**
 * The activity API, mounted at `/public`: `POST /v1/submit/<activity>`, `POST /v1/query/<query>`,
 * `GET /v1/jwks` (session-signing key) and `GET /v1/signer` (bundle-signing key). Every admitted
 * submit and query is charged to `options.rateLimits` (per credential, per organization).
 */
export function activityApi(
  runtime: Runtime,
  registry: Registry,
  options: Pick<PipelineOptions, 'rateLimits'> = {},
): Hono<PipelineEnv> {
  const { rateLimits } = options
  const app = new Hono<PipelineEnv>()
  // Only pages the operator allowed (or loopback dev pages) may read answers; see originPolicy.
  // A page on any other origin reaches the service only cross-origin, unless it is served from the
  // service's own address under a foreign name (DNS rebinding): that page is same-origin, so it is
  // refused by its Host. Browsers send an Origin on every POST; callers that send none (servers,
  // scripts) may name the service however their deployment does.
  const grant = corsGrant({ methods: ['GET', 'POST', 'OPTIONS'], headers: CORS_ALLOWED_HEADERS })
  app.use('*', async (c, next) => {
    const origin = c.req.header('origin')
    const readable = origin !== undefined && (await originAllowed(runtime, c, origin))
    if (origin !== undefined && !readable) {
      const host = requestHost(c)
      if (host !== undefined && !(await hostAllowed(runtime, host)))
        throw hostRefusal(host, 'the activity API')
    }
    grant(c, readable ? origin : undefined)
    return c.req.method === 'OPTIONS' ? c.body(null, 204) : next()
  })
  app.post('/v1/submit/:path', async (c) => {
    // Stage timings (issue 42): a few clock reads per request, counted in `runtime.timings`.
    const { timings } = runtime
    const started = performance.now()
    const request = {
      path: c.req.param('path'),
      headers: c.req.raw.headers,
      ...(await readJson(c)),
      rateLimits,
    }
    timings.record('read', performance.now() - started)
    const outcome = await submitActivity(runtime, registry, request)
    const { id, type, organizationId } = outcome.activity
    c.set('activity', { activityId: id, type, organizationId })
    const rendering = performance.now()
    const response = c.json(outcome)
    const done = performance.now()
    timings.record('render', done - rendering)
    timings.record('submit', done - started)
    return response
  })
  app.post('/v1/query/:path', async (c) => {
    const request = {
      path: c.req.param('path'),
      headers: c.req.raw.headers,
      ...(await readJson(c)),
      rateLimits,
    }
    return c.json((await runQuery(runtime, registry, request)) as object)
  })
  app.get('/v1/jwks', (c) => c.json({ keys: [publicJwk(hexToBytes(runtime.sessionPublicKey), 'session')] }))
  app.get('/v1/signer', (c) =>
    c.json({ signerPublicKey: runtime.signerPublicKey, sessionPublicKey: runtime.sessionPublicKey }),
  )
  return app
}
