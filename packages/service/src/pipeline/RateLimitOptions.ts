/** A sustained rate and the burst allowed above it. */
export interface RateLimit {
  /** Requests per second, sustained. */
  perSecond: number
  /** Requests that may arrive at once after a quiet spell. @default perSecond (one second's worth) */
  burst?: number
}

/** `CreateServiceOptions.rateLimits`: budgets on the activity API (`/public/v1/submit/*`, `/public/v1/query/*`). */
export interface RateLimitOptions {
  /** Per credential (API key, passkey, read-only session). @default none */
  perKey?: RateLimit
  /** Per organization a request acts in (each sub-organization its own). @default none */
  perOrganization?: RateLimit
}

/** Which budget refused a request (events, the error's details). */
export type RateLimitName = 'perKey' | 'perOrganization'
