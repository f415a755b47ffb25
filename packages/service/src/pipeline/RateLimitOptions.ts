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
