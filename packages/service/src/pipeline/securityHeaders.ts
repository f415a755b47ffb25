import type { MiddlewareHandler } from 'hono'

/**
 * Headers a production service sends on every answer, set before the handler answers (a route
 * that serves a page, such as the secret frame, replaces the CSP with its own): nothing it serves
 * may be framed, sniffed into another type, or leak its URL to the next page.
 */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    c.header('X-Content-Type-Options', 'nosniff')
    c.header('Referrer-Policy', 'no-referrer')
    c.header('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'")
    c.header('X-Frame-Options', 'DENY')
    await next()
  }
}
