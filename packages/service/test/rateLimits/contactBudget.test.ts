// The per-contact send budget counts a mailbox, not a spelling: plus-addressed tags, a full-width
// domain (which IDNA maps to the same host), and Gmail's dots and googlemail.com reach the same
// inbox, and once each bought a budget of its own, so one inbox could be sent codes without bound
// (from changing addresses).
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../src/testing/harness.ts'

async function otpInit(h: Harness, contact: string, address: string) {
  const res = await h.service.app.request(
    '/v1/otp_init',
    {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        Origin: 'http://app.test',
      },
      body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact }),
    },
    // A different client address each time: the per-address budget is not what is tested here.
    { incoming: { socket: { remoteAddress: address } } },
  )
  return { status: res.status, body: await res.json() }
}

describe('the per-contact OTP send budget', () => {
  it('plus-addressed spellings of one mailbox share its send budget', async () => {
    const h = await createHarness()
    const victim = 'victim@example.com'
    let n = 0
    for (let i = 0; i < 3; i++) expect((await otpInit(h, victim, `198.51.100.${++n}`)).status).toBe(200)
    // The mailbox's budget (3 a minute) is spent.
    expect((await otpInit(h, victim, `198.51.100.${++n}`)).status).toBe(429)
    // The same inbox, spelled with a tag: every message lands in victim@example.com.
    const tagged: number[] = []
    for (let i = 0; i < 10; i++)
      tagged.push((await otpInit(h, `victim+${i}@example.com`, `198.51.100.${++n}`)).status)
    tagged.push((await otpInit(h, 'victim@ｅｘａｍｐｌｅ.com', `198.51.100.${++n}`)).status)
    expect(tagged).toEqual(tagged.map(() => 429))
    // Another mailbox of the domain keeps its own budget.
    expect((await otpInit(h, 'other@example.com', `198.51.100.${++n}`)).status).toBe(200)
  })

  it("Gmail's dotted and googlemail.com spellings of one inbox share its send budget", async () => {
    const h = await createHarness()
    let n = 0
    for (let i = 0; i < 3; i++)
      expect((await otpInit(h, 'victim@gmail.com', `198.51.100.${++n}`)).status).toBe(200)
    const spellings = [
      'v.ictim@gmail.com',
      'vi.ctim@gmail.com',
      'v.i.c.t.i.m@gmail.com',
      'victim@googlemail.com',
    ]
    const statuses: number[] = []
    for (const spelling of spellings) statuses.push((await otpInit(h, spelling, `198.51.100.${++n}`)).status)
    expect(statuses).toEqual(spellings.map(() => 429))
    // Dots count elsewhere: another domain's dotted spelling is another mailbox.
    expect((await otpInit(h, 'v.ictim@example.com', `198.51.100.${++n}`)).status).toBe(200)
  })
})
