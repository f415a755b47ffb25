import { z } from 'zod'
import type { RateLimit, RateLimitOptions } from '../../pipeline/RateLimitOptions.ts'

const budget = (who: string) =>
  z
    .strictObject({
      per_second: z
        .number({ error: 'must be a number of requests per second from 0.01 to 100000' })
        .min(0.01, { error: 'must be a number of requests per second from 0.01 to 100000' })
        .max(100_000, { error: 'must be a number of requests per second from 0.01 to 100000' })
        .describe(`Requests per second ${who}, sustained.`),
      burst: z
        .int({ error: 'must be a whole number of requests from 1 to 100000' })
        .min(1, { error: 'must be a whole number of requests from 1 to 100000' })
        .max(100_000, { error: 'must be a whole number of requests from 1 to 100000' })
        .optional()
        .describe('Requests that may arrive at once after a quiet spell. Default: one second’s worth.'),
    })
    .optional()
    .describe(`A budget ${who}; a request over it is refused with 429 and Retry-After.`)

export const rateLimitsSection = z
  .strictObject({
    per_key: budget('per credential (API key, passkey, read-only session)'),
    per_organization: budget(
      "per organization a request acts in (each sub-organization its own; the auth proxy's forwarded calls never spend it)",
    ),
    per_client_address: budget(
      'per client address on the anonymous auth-proxy routes (`/v1/*`; the address a trusted proxy forwarded, an IPv6 client by its /64)',
    ),
  })
  .describe(
    'Budgets on the activity API (`/public/v1/submit/*`, `/public/v1/query/*`) and the anonymous auth proxy (`/v1/*`), shared by every instance on one PostgreSQL database. `start` defaults to 10 requests per second per organization (burst 20) when the section is absent, and to 10 per second per client address (burst 40) unless `per_client_address` is set; `dev` limits nothing unless this section says so.',
  )

export type RateLimitsSection = z.infer<typeof rateLimitsSection>

/**
 * `start`'s budgets when the file sets none: the public service's published 10 requests/s per
 * sub-organization, and 10/s (burst 40: a sign-in is a handful of calls, and a NAT shares an
 * address) per client address on the auth proxy.
 */
export const START_RATE_LIMITS: RateLimitOptions = {
  perOrganization: { perSecond: 10, burst: 20 },
  perClientAddress: { perSecond: 10, burst: 40 },
}

const limitOf = (parsed: { per_second: number; burst?: number | undefined }): RateLimit => ({
  perSecond: parsed.per_second,
  ...(parsed.burst !== undefined ? { burst: parsed.burst } : {}),
})

/** `CreateServiceOptions.rateLimits` from the section (an empty section limits nothing). */
export function rateLimitsOptions(parsed: RateLimitsSection): RateLimitOptions {
  return {
    ...(parsed.per_key ? { perKey: limitOf(parsed.per_key) } : {}),
    ...(parsed.per_organization ? { perOrganization: limitOf(parsed.per_organization) } : {}),
    ...(parsed.per_client_address ? { perClientAddress: limitOf(parsed.per_client_address) } : {}),
  }
}

/**
 * `start`'s budgets: the section's, or `START_RATE_LIMITS` without one. The per-client-address
 * budget keeps its default when a section sets only others: an anonymous route is never left
 * unbudgeted by a file written for the activity API's budgets.
 */
export function startRateLimits(parsed: RateLimitsSection | undefined): RateLimitOptions {
  if (!parsed) return START_RATE_LIMITS
  return { perClientAddress: START_RATE_LIMITS.perClientAddress!, ...rateLimitsOptions(parsed) }
}
