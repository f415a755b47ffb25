import { describe, expect, it } from 'vitest'
import { rateLimitsOptions, rateLimitsSection, START_RATE_LIMITS, startRateLimits } from './rateLimits.ts'

describe('the rate_limits config section', () => {
  it('maps budgets to CreateServiceOptions.rateLimits', () => {
    expect(
      rateLimitsOptions(
        rateLimitsSection.parse({
          per_key: { per_second: 5 },
          per_organization: { per_second: 10, burst: 20 },
        }),
      ),
    ).toEqual({ perKey: { perSecond: 5 }, perOrganization: { perSecond: 10, burst: 20 } })
    expect(rateLimitsOptions(rateLimitsSection.parse({}))).toEqual({})
    expect(
      rateLimitsOptions(rateLimitsSection.parse({ per_client_address: { per_second: 3, burst: 9 } })),
    ).toEqual({ perClientAddress: { perSecond: 3, burst: 9 } })
  })

  it('start keeps a per-client-address budget on the anonymous routes unless the section sets its own', () => {
    expect(startRateLimits(undefined)).toEqual(START_RATE_LIMITS)
    expect(START_RATE_LIMITS.perClientAddress).toEqual({ perSecond: 10, burst: 40 })
    expect(startRateLimits(rateLimitsSection.parse({ per_key: { per_second: 5 } }))).toEqual({
      perKey: { perSecond: 5 },
      perClientAddress: { perSecond: 10, burst: 40 },
    })
    expect(
      startRateLimits(rateLimitsSection.parse({ per_client_address: { per_second: 1 } })).perClientAddress,
    ).toEqual({ perSecond: 1 })
  })

  it('names each key it refuses', () => {
    const result = rateLimitsSection.safeParse({ per_key: { per_second: 0, burst: 1.5 }, per_user: {} })
    expect(result.success).toBe(false)
    expect(result.error!.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)).toEqual(
      expect.arrayContaining([
        'per_key.per_second: must be a number of requests per second from 0.01 to 100000',
        'per_key.burst: must be a whole number of requests from 1 to 100000',
        expect.stringMatching(/Unrecognized key: "per_user"/),
      ]),
    )
  })
})
