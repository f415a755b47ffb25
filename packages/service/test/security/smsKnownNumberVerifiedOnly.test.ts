// With an SMS budget (`[sms] max_per_hour`), an SMS `otp_init` asks whether a user holds the number
// verified (`knownNumber`, signin/signInState.ts): codes to such a number are not charged to the
// share of the hour kept for new numbers. It is asked before the contact's budget is charged, for
// anyone, so it reads one row of the index of verified contacts at most. It once read every user
// row holding the number through the index of all phone numbers, unverified copies included, and
// anyone may set any number unverified on users of their own account (create_users, 100 a call):
// 2,000 copies of a victim's number made every anonymous code to it (the victim's own sign-ins
// included) read 2,014 rows. An unverified copy makes no number known either: else whoever sets a
// number on a user of their own spends the known numbers' share on it.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it, vi } from 'vitest'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { deploymentOn, usePostgres } from '../support/twoInstances.ts'
import { countRowsRead } from './rowsRead.ts'

const NUMBER = '+447911123456'

/** `copies` users of an attacker's account holding `number` unverified (what anyone may set). */
async function unverifiedCopies(h: Harness, number: string, copies: number) {
  const attacker = await h.createSubOrganization({ name: 'attacker' })
  for (let made = 0; made < copies; made += 100) {
    h.clock.advance(1)
    resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: Array.from({ length: Math.min(100, copies - made) }, (_, i) => ({
            userName: `u${made + i}`,
            userPhoneNumber: number,
            apiKeys: [],
            authenticators: [],
            oauthProviders: [],
          })),
        },
        { as: attacker.keys[0]!, organizationId: attacker.organizationId },
      ),
    )
  }
}

/** An anonymous SMS `otp_init` to `number` through the auth proxy, and the rows the store read for it. */
async function otpInit(h: Harness, number: string) {
  const counter = countRowsRead()
  try {
    const reply = await h.service.app.request(
      '/v1/otp_init',
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
          Origin: 'http://localhost:5173',
        },
        body: JSON.stringify({ otpType: 'OTP_TYPE_SMS', contact: number }),
      },
      { incoming: { socket: { remoteAddress: '198.51.100.22' } } },
    )
    const body = (await reply.json()) as { details?: { errorCode?: string; limit?: string } }
    return { status: reply.status, body, rows: await counter.rows() }
  } finally {
    vi.restoreAllMocks()
  }
}

async function readsOfOneOtpInit(copies: number) {
  const h = await createHarness({ smsBudget: { maxPerHour: 1000 } })
  await unverifiedCopies(h, NUMBER, copies)
  const sent = await otpInit(h, NUMBER)
  await h.service.close()
  expect(sent.status, JSON.stringify(sent.body)).toBe(200)
  return sent.rows
}

it('one anonymous SMS otp_init reads the same rows whatever the unverified copies of the number', async () => {
  const few = await readsOfOneOtpInit(1)
  const many = await readsOfOneOtpInit(2000)
  expect(many, JSON.stringify({ few, many })).toBeLessThanOrEqual(few + 2)
}, 300_000)

/** Unverified copies of one number spend the new numbers' share; a user's verified number does not. */
async function knownOnlyVerified(h: Harness) {
  const copied = '+447911123457'
  const held = '+447911123458'
  await unverifiedCopies(h, copied, 3)
  // The operator's user: a contact its root sets needs no proof (verified).
  h.clock.advance(1)
  resultOf(
    'create_users',
    await h.submit('create_users', {
      users: [
        { userName: 'known', userPhoneNumber: held, apiKeys: [], authenticators: [], oauthProviders: [] },
      ],
    }),
  )
  expect((await otpInit(h, copied)).status).toBe(200)
  // The copied number spent the new numbers' share (1): a code to a new number is refused.
  const second = await otpInit(h, '+447911123459')
  expect(second.status).toBe(429)
  expect(second.body.details).toMatchObject({ errorCode: 'OTP_RATE_LIMITED', limit: 'smsPerHourNewNumbers' })
  // A number a user holds verified still gets its code.
  expect((await otpInit(h, held)).status).toBe(200)
  await h.service.close()
}

const BUDGET = { smsBudget: { maxPerHour: 10, maxPerHourNewNumbers: 1 } }

it("a number is known only held verified: unverified copies spend the new numbers' share, a user's verified number does not", async () => {
  await knownOnlyVerified(await createHarness(BUDGET))
})

describe('on PostgreSQL', { timeout: 120_000 }, () => {
  const postgres = usePostgres({ start: 120_000 })

  it('a number is known only held verified (the index of verified contacts, one row)', async () => {
    await knownOnlyVerified(await deploymentOn(postgres.cluster, 'sms_known_number', BUDGET).open())
  })
})
