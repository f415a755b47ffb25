import type { Context } from 'hono'

export interface CorsGrantOptions {
  /** The methods a preflight allows. */
  methods: readonly string[]
  /** The request headers a preflight allows. */
  headers: readonly string[]
}

/**
 * The CORS headers of one route family: `grant(c, origin)` lets the page at `origin` read the
 * answer (`undefined`: no page may), and on a preflight (`OPTIONS`) names the family's methods and
 * request headers, cached for ten minutes. Every answer it sets headers on varies with the origin.
 * Which origins to grant is the caller's decision (`originPolicy.ts`), never `*`. Call it before
 * the handler answers: a header added to a finished answer makes @hono/node-server rebuild the
 * whole response instead of writing it as it was made.
 */
export function corsGrant({
  methods,
  headers,
}: CorsGrantOptions): (c: Context, origin: string | undefined) => void {
  const allowMethods = methods.join(', ')
  const allowHeaders = headers.join(', ')
  return (c, origin) => {
    if (origin !== undefined) c.header('Access-Control-Allow-Origin', origin)
    c.header('Vary', 'Origin')
    if (c.req.method !== 'OPTIONS') return
    c.header('Access-Control-Allow-Methods', allowMethods)
    c.header('Access-Control-Allow-Headers', allowHeaders)
    c.header('Access-Control-Max-Age', '600')
  }
}
