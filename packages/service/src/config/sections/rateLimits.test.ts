import { describe, expect, it } from 'vitest'
import { rateLimitsOptions, rateLimitsSection } from './rateLimits.ts'

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
