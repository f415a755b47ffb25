import { describe, expect, it } from 'vitest'
import { sponsorshipOptions, sponsorshipSection } from './sponsorship.ts'

describe('the [sponsorship] section', () => {
  it('maps to the service options, a sponsor without a key getting a generated one', () => {
    const parsed = sponsorshipSection.parse({
      delegates: { 'eip155:31337': '0x00000000000000000000000000000000000000d1' },
      caps: { per_user_per_day: 1_000_000 },
      organization_caps: { org1: { per_transaction: 300_000 } },
    })
    expect(sponsorshipOptions(parsed)).toEqual({
      delegates: { 'eip155:31337': '0x00000000000000000000000000000000000000d1' },
      sponsors: { default: {} },
      caps: { perUserPerDay: 1_000_000 },
      organizationCaps: { org1: { perTransaction: 300_000 } },
    })
  })

  it('maps the Solana fee payer key and the lamport caps', () => {
    const key = 'ab'.repeat(32)
    const parsed = sponsorshipSection.parse({
      delegates: {},
      sponsors: { default: { solana_private_key: key } },
      caps: { per_transaction_lamports: 10_000, per_user_per_day_lamports: 50_000 },
      organization_caps: { org1: { per_organization_per_month_lamports: 1_000_000 } },
    })
    expect(sponsorshipOptions(parsed)).toMatchObject({
      sponsors: { default: { solanaPrivateKey: key } },
      caps: { perTransactionLamports: 10_000, perUserPerDayLamports: 50_000 },
      organizationCaps: { org1: { perOrganizationPerMonthLamports: 1_000_000 } },
    })
  })

  it('refuses a malformed key or an unknown field, naming it', () => {
    const bad = sponsorshipSection.safeParse({ delegates: {}, sponsors: { default: { private_key: '12' } } })
    expect(bad.success).toBe(false)
    expect(bad.error?.issues[0]?.path).toEqual(['sponsors', 'default', 'private_key'])
    expect(sponsorshipSection.safeParse({ delegates: {}, cap: {} }).success).toBe(false)
  })
})
