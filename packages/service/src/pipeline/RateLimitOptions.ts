/** A sustained rate and the burst allowed above it. */
export interface RateLimit {
  /** Requests per second, sustained. */
  perSecond: number
  /** Requests that may arrive at once after a quiet spell. @default perSecond (one second's worth) */
  burst?: number
}

/**
 * `CreateServiceOptions.rateLimits`: budgets on the activity API (`/public/v1/submit/*`,
 * `/public/v1/query/*`) and on the anonymous auth proxy (`/v1/*`).
 */
export interface RateLimitOptions {
  /** Per credential (API key, passkey, read-only session). @default none */
  perKey?: RateLimit
  /**
   * Per organization a request acts in (each sub-organization its own). The auth proxy's forwarded
   * calls never spend it: anonymous traffic is budgeted by `perClientAddress` instead. @default none
   */
  perOrganization?: RateLimit
  /**
   * Per client address on the auth proxy's anonymous routes (`/v1/*`; an IPv6 client by its /64),
   * the address a trusted proxy forwarded or the socket's. @default none
   */
  perClientAddress?: RateLimit
}

/** Which budget refused a request (events, the error's details). */
export type RateLimitName = 'perKey' | 'perOrganization' | 'perClientAddress'

/**
 * What `createService` takes for the activity API's pipeline (`activityApi`): its budgets (the auth
 * proxy, which builds its own middleware, takes `perClientAddress` from the same option) and its
 * body limit.
 */
export interface PipelineOptions {
  /**
   * Budgets on the activity API, per credential and per organization, and on the auth proxy per
   * client address: a request over one is refused with 429 `RATE_LIMITED` and `Retry-After`. Held
   * across instances on PostgreSQL.
   * @default none (the `dev` command sets none unless told)
   */
  rateLimits?: RateLimitOptions
  /** Largest accepted body on the activity API (`/public/*`), in bytes. @default 262144 */
  maxBodyBytes?: number
}
