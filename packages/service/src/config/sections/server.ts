import { isIP } from 'node:net'
import { z } from 'zod'
import { DEFAULT_DRAIN_GRACE_SECONDS } from '../../server/runServer.ts'
import { FORWARDED_HEADERS, type ForwardedHeader } from '../trustedProxies.ts'

/** An address (`10.0.0.5`, `::1`) or a CIDR block (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressOrCidr(value: string): boolean {
  const [address, prefix, ...rest] = value.split('/')
  if (rest.length > 0 || address === undefined) return false
  const family = isIP(address)
  if (family === 0) return false
  if (prefix === undefined) return true
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
}

/** An http(s) URL with nothing after the origin (no path, query or fragment). */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value
  } catch {
    return false
  }
}

export const serverSection = z
  .strictObject({
    host: z
      .string({ error: 'must be a host name or address (a string)' })
      .min(1)
      .default('127.0.0.1')
      .describe('Interface to bind: `0.0.0.0` for every IPv4 interface, `::` for every interface.'),
    port: z
      .int({ error: 'must be a whole number from 0 to 65535' })
      .min(0, { error: 'must be a whole number from 0 to 65535' })
      .max(65535, { error: 'must be a whole number from 0 to 65535' })
      .default(8787)
      .describe('TCP port to listen on; 0 picks a free one.'),
    trusted_proxies: z
      .array(
        z.string().refine(isAddressOrCidr, {
          error: 'must be an IP address (10.0.0.5, ::1) or a CIDR block (10.0.0.0/8, fd00::/8)',
        }),
        { error: 'must be a list of IP addresses or CIDR blocks' },
      )
      .default([])
      .describe(
        'Reverse proxies whose forwarding headers (the family `forwarded_header` names, with `X-Forwarded-Proto` / `-Host`) are believed (addresses or CIDR blocks). Requests from anyone else have those headers ignored.',
      ),
    forwarded_header: z
      .enum(FORWARDED_HEADERS, { error: `must be one of ${FORWARDED_HEADERS.join(', ')}` })
      .default('x-forwarded-for')
      .describe(
        "The one header the trusted proxies write the client's address into: `x-forwarded-for` (nginx with `$proxy_add_x_forwarded_for`, Caddy, AWS ALB, Google Cloud load balancers), `forwarded` (RFC 7239) or `x-real-ip`. The other families are the client's own words and are ignored; the client is the rightmost address in it that is not a trusted proxy.",
      ),
    public_url: z
      .string({ error: 'must be an http(s) origin such as https://wallet.example.com' })
      .refine(isOrigin, { error: 'must be an http(s) origin such as https://wallet.example.com (no path)' })
      .optional()
      .describe(
        'The origin browsers reach the service at (behind the reverse proxy), e.g. `https://wallet.example.com`; printed by `start`, and the default of `webauthn.rp_id`.',
      ),
    drain_grace_seconds: z
      .number({ error: 'must be a number of seconds from 0 to 3600' })
      .min(0, { error: 'must be a number of seconds from 0 to 3600' })
      .max(3600, { error: 'must be a number of seconds from 0 to 3600' })
      .default(DEFAULT_DRAIN_GRACE_SECONDS)
      .describe(
        'On SIGTERM/SIGINT: how long requests are still served (`/readyz` answering 503, every answer closing its connection) so a load balancer takes the instance out; then new requests get 503 and `observability.drain_seconds` bounds the rest.',
      ),
  })
  .describe('Where the service listens and who may stand in front of it.')

export type ServerSection = z.infer<typeof serverSection>

/** What `start` needs from the section to listen. */
export interface ServerOptions {
  host: string
  port: number
  trustedProxies: string[]
  /** The header family the trusted proxies set (`trustProxies`). */
  forwardedHeader: ForwardedHeader
  publicUrl: string | undefined
  drainGraceSeconds: number
}

export function serverOptions(parsed: ServerSection): ServerOptions {
  return {
    host: parsed.host,
    port: parsed.port,
    trustedProxies: parsed.trusted_proxies,
    forwardedHeader: parsed.forwarded_header,
    publicUrl: parsed.public_url,
    drainGraceSeconds: parsed.drain_grace_seconds,
  }
}
