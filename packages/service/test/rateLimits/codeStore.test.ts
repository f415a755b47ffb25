// The store of one-time codes is shared by every organization, and a code is refused while it is
// full. One network must not fill it: `otp_init` is budgeted per IPv6 /64 and also per /56 and
// /48 (which one holder gets whole), an end user's sub-organization per organization, and stale
// codes are swept a page at a time through an index. Before, 20 /64s of one /56 took the last
// 400 places in a minute (every /64 its own budget) and locked every user of every organization
// out of sign-in codes; an end user holding verified contacts was budgeted per contact only.
import { describe, expect, it, vi } from 'vitest'
import { Transaction as StoreTransaction } from '../../src/kernel/store/Transaction.ts'
import {
  createHarness,
  fakeClock,
  fillRows,
  type Harness,
  type Json,
  resultOf,
  testKey,
} from '../../src/testing/harness.ts'
import { otpInit } from './otpInit.ts'

const MINUTE = 60_000

/** Codes other networks hold: live for the next 15 minutes. */
async function holdCodes(h: Harness, count: number, liveMs = 15 * MINUTE) {
  const now = h.clock.now()
  await fillRows(h, 'pluginRows', count, (_i, id) => ({
    kind: 'otp',
    data: {
      otpId: id,
      organizationId: h.organizationId,
      expiresAtMs: now + liveMs - 10 * MINUTE,
      status: 'pending',
    },
    staleAt: now + liveMs,
  }))
}

/**
 * One attacker minute: fresh contacts from `networks` /64s (`prefixOf(n)`: the first four groups of
 * the n-th), each until it is refused; it stops at the first /64 refused at once. Answers the codes
 * it got and the last refusal.
 */
async function sprayMinute(h: Harness, prefixOf: (n: number) => string, tag: string, networks = 8) {
  let sent = 0
  let refusal: { status: number; body: Json } | undefined
  for (let n = 0; n < networks; n++) {
    let fromThis = 0
    for (let i = 0; i < 25; i++) {
      const reply = await otpInit(h, `${tag}-${n}-${i}-${h.clock.now()}@spray.example`, `${prefixOf(n)}::1`)
      if (reply.status !== 200) {
        refusal = reply
        break
      }
      fromThis++
    }
    sent += fromThis
    if (fromThis === 0) break
  }
  return { sent, refusal }
}

describe('the store of one-time codes against one network', () => {
  it('one IPv6 /56 cannot take the last 400 places of the store: another user still gets a code', async () => {
    const h = await createHarness({ clock: fakeClock(), otpCaps: { maxPendingCodes: 10_000 } })
    // Other networks hold all but 400 places.
    await holdCodes(h, 9_600)
    let total = 0
    // Twelve minutes from the /64s of 2001:db8:77:ab00::/56 (a code lives 15).
    for (let minute = 0; minute < 12; minute++) {
      const spray = await sprayMinute(
        h,
        (n) => `2001:db8:77:ab${n.toString(16).padStart(2, '0')}`,
        `m${minute}`,
        32,
      )
      total += spray.sent
      h.clock.advance(MINUTE)
    }
    // A user elsewhere still gets a code.
    const victim = await otpInit(h, 'victim@example.com', '198.51.100.7')
    expect(victim.status).toBe(200)
    // The /56's budget: 30 a minute, 300 an hour, whatever its /64s: a fresh one of them is refused.
    expect(total).toBe(300)
    const refusal = await otpInit(h, 'more@spray.example', '2001:db8:77:abff::1')
    expect(refusal).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'OTP_RATE_LIMITED', retryAfterSeconds: expect.any(Number) } },
    })
    expect(refusal.body.message).toMatch(/\/56/)
  })

  it('the /56s of one /48 share its budget, and another /48 keeps its own', async () => {
    const h = await createHarness({ clock: fakeClock() })
    // 2001:db8:5::/48: its first two /56s spend its 60 a minute, the third gets nothing.
    const first = await sprayMinute(h, (n) => `2001:db8:5:${n.toString(16)}`, 'a')
    const second = await sprayMinute(h, (n) => `2001:db8:5:${(0x100 + n).toString(16)}`, 'b')
    const third = await sprayMinute(h, (n) => `2001:db8:5:${(0x200 + n).toString(16)}`, 'c')
    expect([first.sent, second.sent, third.sent]).toEqual([30, 30, 0])
    expect(third.refusal?.status).toBe(429)
    expect(third.refusal?.body.message).toMatch(/\/48/)
    expect((await otpInit(h, 'neighbour@example.com', '2001:db8:6::1')).status).toBe(200)
    // IPv4 clients keep their per-address budget alone.
    expect((await otpInit(h, 'v4@example.com', '192.0.2.77')).status).toBe(200)
  })

  it('a full store refuses a new code with 429 and retryAfterSeconds; a sweep deletes a page of stale codes, never a live one', async () => {
    const h = await createHarness({ clock: fakeClock(), otpCaps: { maxPendingCodes: 1_000 } })
    // 400 live codes, then 700 gone stale an hour ago.
    await holdCodes(h, 400)
    h.clock.advance(-2 * 60 * MINUTE)
    await h.service.store.transaction(async (tx) => {
      for (let i = 0; i < 700; i++)
        await tx.put('pluginRows', {
          id: `stale-${i}`,
          kind: 'otp',
          data: {
            otpId: `stale-${i}`,
            organizationId: h.organizationId,
            expiresAtMs: h.clock.now(),
            status: 'pending',
          },
          staleAt: h.clock.now() + 10 * MINUTE,
          createdAt: h.clock.now(),
          updatedAt: h.clock.now(),
        })
    })
    h.clock.advance(2 * 60 * MINUTE)
    expect((await otpInit(h, 'first@example.com', '198.51.100.1')).status).toBe(200)
    const rows = await h.service.store.findBy('pluginRows', 'kind', 'otp')
    // One page of 500 stale codes went; every live one stayed.
    expect(rows.filter((row) => row.id.startsWith('stale-'))).toHaveLength(200)
    expect(rows.filter((row) => row.id.startsWith('filler-'))).toHaveLength(400)
    // Live codes fill it: a new one is refused, clearly.
    await h.service.store.transaction(async (tx) => {
      for (const row of rows) if (row.id.startsWith('stale-')) await tx.delete('pluginRows', row.id)
    })
    const now = h.clock.now()
    await h.service.store.transaction(async (tx) => {
      for (let i = 0; i < 599; i++)
        await tx.put('pluginRows', {
          id: `live-${i}`,
          kind: 'otp',
          data: {
            otpId: `live-${i}`,
            organizationId: h.organizationId,
            expiresAtMs: now + MINUTE,
            status: 'pending',
          },
          staleAt: now + 11 * MINUTE,
          createdAt: now,
          updatedAt: now,
        })
    })
    // Written by another writer: a process counts the codes again 10 s after it last did (or on
    // every code once it saw them at 90% of the cap), so the cap holds from then on.
    h.clock.advance(10_000)
    const refused = await otpInit(h, 'second@example.com', '198.51.100.2')
    expect(refused).toMatchObject({
      status: 429,
      body: { details: { retryAfterSeconds: 60, limit: 'maxPendingCodes' } },
    })
    // Once they are stale, codes are sent again.
    h.clock.advance(12 * MINUTE)
    expect((await otpInit(h, 'third@example.com', '198.51.100.3')).status).toBe(200)
  })
})

describe('the caps of the store of codes', () => {
  it('are counted every 10 s and every 10 new rows (1% of the cap, at least 10) a process, and on every new row past 90% of the cap', async () => {
    const h = await createHarness({ clock: fakeClock(), otpCaps: { maxPendingCodes: 100 } })
    const counts: string[] = []
    const original = StoreTransaction.prototype.count
    const spy = vi.spyOn(StoreTransaction.prototype, 'count').mockImplementation(async function (
      this: StoreTransaction,
      ...args: Parameters<StoreTransaction['count']>
    ) {
      if (args[0] === 'pluginRows') counts.push(String(args[2]))
      return original.apply(this, args)
    })
    try {
      // 20 codes from 20 addresses, each a code and 2 rate-limit entries (the contact's, the
      // address's): the codes are counted at the 1st and the 11th, the entries (a cap of
      // 1,000,000: 10,000 between counts) once.
      for (let i = 0; i < 20; i++)
        expect((await otpInit(h, `u${i}@example.com`, `198.51.100.${i + 1}`)).status).toBe(200)
      expect(counts.filter((kind) => kind === 'otp')).toHaveLength(2)
      expect(counts.filter((kind) => kind === 'otp-limit')).toHaveLength(1)
      // 10 s on, counted again; near the cap, every code is counted, and the cap holds.
      h.clock.advance(10_000)
      await holdCodes(h, 69)
      counts.length = 0
      for (let i = 20; i < 40; i++) await otpInit(h, `u${i}@example.com`, `198.51.100.${i + 1}`)
      expect(counts.filter((kind) => kind === 'otp').length).toBeGreaterThanOrEqual(11)
      expect(await h.service.store.count('pluginRows', 'kind', 'otp')).toBe(100)
    } finally {
      spy.mockRestore()
    }
  })

  it('rows other instances add after this one counted: it adds at most 9 more before it counts again and refuses', async () => {
    const h = await createHarness({ clock: fakeClock(), otpCaps: { maxPendingCodes: 100 } })
    // This process counts the codes at its first (none held), then other instances fill the store
    // to 99 in the same second: its own figure says 1.
    expect((await otpInit(h, 'first@example.com', '198.51.100.1')).status).toBe(200)
    await holdCodes(h, 98)
    const statuses: number[] = []
    for (let i = 0; i < 20; i++)
      statuses.push((await otpInit(h, `u${i}@example.com`, `198.51.100.${i + 2}`)).status)
    // Its next 9 rows go uncounted (10 between counts); the 10th is counted, and refused. Before,
    // it added until its own figure reached 90 (89 more: 188 held of a cap of 100).
    expect(statuses).toEqual([...Array(9).fill(200), ...Array(11).fill(429)])
    expect(await h.service.store.count('pluginRows', 'kind', 'otp')).toBe(108)
  })
})

describe('codes an end user asks in their own sub-organization', () => {
  /** A sub-organization whose users hold `count` verified e-mail addresses (as if each verified), and its key. */
  async function accountWithContacts(h: Harness, count: number) {
    const key = testKey()
    const contacts = Array.from({ length: count }, (_, i) => `holder${i}@own.example`)
    const reply = await h.submit('create_sub_organization', {
      subOrganizationName: `Holder ${Math.random().toString(36).slice(2, 8)}`,
      rootUsers: contacts.map((userEmail, i) => ({
        userName: `u${i}`,
        userEmail,
        apiKeys: i === 0 ? [key.apiKey('k')] : [],
        authenticators: [],
        oauthProviders: [],
      })),
      rootQuorumThreshold: 1,
    })
    const { subOrganizationId } = resultOf('create_sub_organization', reply)
    return { key, contacts, organizationId: subOrganizationId as string }
  }

  it('are budgeted per sub-organization, not only per contact; the parent organization is not', async () => {
    const h = await createHarness({ clock: fakeClock() })
    const account = await accountWithContacts(h, 8)
    const as = { as: account.key, organizationId: account.organizationId }
    const statuses: number[] = []
    let refusal: { status: number; body: Json } | undefined
    // An hour of codes to its own contacts, 3 each a minute (each contact's budget).
    for (let minute = 0; minute < 60; minute += 10) {
      for (const contact of account.contacts)
        for (let i = 0; i < 3; i++) {
          // Each its own request (a stamped body submitted twice is one activity).
          h.clock.advance(1)
          const reply = await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact }, as)
          statuses.push(reply.status)
          if (reply.status !== 200) refusal = reply
        }
      h.clock.advance(10 * MINUTE)
    }
    // 20 an hour for the whole account, where its 8 contacts would have had 240.
    expect(statuses.filter((status) => status === 200)).toHaveLength(20)
    expect(refusal).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'OTP_RATE_LIMITED', retryAfterSeconds: expect.any(Number) } },
    })
    expect(refusal!.body.message).toMatch(/organization/)
    // The operator's own back end asks codes for all its users, unthrottled but per contact.
    const parent: number[] = []
    for (let i = 0; i < 30; i++, h.clock.advance(1))
      parent.push(
        (await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact: `user${i % 10}@op.example` }))
          .status,
      )
    expect(parent).toEqual(parent.map(() => 200))
  })
})
