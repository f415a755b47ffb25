// How `otp_init`'s budgets key a client address (pipeline/rateLimit.ts, `addressBudgetKey` and
// `ipv6NetworkKeys`, which the per-address budget of every /v1/* call shares), for addresses a
// client, a translator or a relay in front of the service writes: spellings of one address share
// one budget, and clients that share only a translator or a relay do not. IPv4 clients written in
// the NAT64 local-use prefix 64:ff9b:1::/48 or by a Teredo server once shared one /64 budget, and a
// 6to4 /48 was budgets on top of the IPv4 address it is made from.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { trustProxies } from '../../src/config/trustedProxies.ts'
import { addressBudgetKey, ipv6NetworkKeys } from '../../src/pipeline/rateLimit.ts'
import { OTP_INIT_PER_ADDRESS } from '../../src/signin/proxy/otpInit.ts'
import { createHarness, fakeClock, type Harness } from '../../src/testing/harness.ts'
import { otpInit } from './otpInit.ts'

const PER_MINUTE = OTP_INIT_PER_ADDRESS.perMinute

/** `otp_init` as `start` serves it behind a trusted reverse proxy at 10.0.0.2 that sets `X-Forwarded-For`. */
async function viaProxy(h: Harness, contact: string, forwardedFor: string) {
  const fetch = trustProxies(h.service.app.fetch, ['10.0.0.2'], 'x-forwarded-for')
  const response = await fetch(
    new Request('http://127.0.0.1/v1/otp_init', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        'X-Forwarded-For': forwardedFor,
      },
      body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact }),
    }),
    { incoming: { socket: { remoteAddress: '10.0.0.2' } } },
  )
  return { status: response.status, body: await response.json() }
}

/** `count` codes to fresh contacts from `address`: their statuses. */
async function spend(h: Harness, tag: string, address: string, count: number) {
  const statuses: number[] = []
  for (let i = 0; i < count; i++)
    statuses.push((await otpInit(h, `${tag}-${i}@spray.example`, address)).status)
  return statuses
}

describe('IPv4 clients written in an IPv6 address', () => {
  it('NAT64 local-use prefix 64:ff9b:1::/96 (RFC 8215): one IPv4 client spending its budget does not refuse another IPv4 client', async () => {
    const h = await createHarness({ clock: fakeClock() })
    // Control: in the well-known prefix 64:ff9b::/96 each IPv4 client has its own budget.
    expect(await spend(h, 'wk', '64:ff9b::c633:6401', PER_MINUTE + 1)).toEqual([
      ...Array(PER_MINUTE).fill(200),
      429,
    ])
    expect((await otpInit(h, 'wk-victim@example.com', '64:ff9b::cb00:7101')).status).toBe(200)
    // The same through a translator using the local-use prefix: 198.51.100.2 spends its 20 ...
    expect(await spend(h, 'lu', '64:ff9b:1::c633:6402', PER_MINUTE + 1)).toEqual([
      ...Array(PER_MINUTE).fill(200),
      429,
    ])
    // ... and 203.0.113.2, an unrelated user behind the same translator, still gets a code.
    expect((await otpInit(h, 'lu-victim@example.com', '64:ff9b:1::cb00:7102')).status).toBe(200)
    // 198.51.100.1, which spent its budget through the well-known prefix, is the same client here.
    expect((await otpInit(h, 'lu-again@spray.example', '64:ff9b:1::c633:6401')).status).toBe(429)
  })

  it('64:ff9b:1::/96 is keyed by the IPv4 address as 64:ff9b::/96 is, not one /64, /56 and /48 for every IPv4 client', () => {
    expect(addressBudgetKey('64:ff9b:1::c633:6401')).toBe('198.51.100.1')
    expect(addressBudgetKey('64:ff9b:1::cb00:7101')).toBe('203.0.113.1')
    expect(addressBudgetKey('64:ff9b:1:ab:cd:ef:198.51.100.1')).toBe('198.51.100.1')
    expect(ipv6NetworkKeys('64:ff9b:1::cb00:7101')).toBeUndefined()
    // Control: next to it, an IPv6 network as any other.
    expect(addressBudgetKey('64:ff9b:2::cb00:7101')).toBe('64:ff9b:2:0::/64')
    expect(ipv6NetworkKeys('64:ff9b:2::cb00:7101')).toEqual({
      slash56: '64:ff9b:2:0::/56',
      slash48: '64:ff9b:2::/48',
    })
  })

  it('Teredo 2001::/32: two clients behind one Teredo server (65.54.227.120) are two budgets, each its IPv4 address', () => {
    // 2001:0:4136:e378:<flags>:<obfuscated port>:<obfuscated client IPv4>: the /64 is the server's.
    const clientA = '2001:0:4136:e378:8000:63bf:3fff:fdd2' // client 192.0.2.45
    const clientB = '2001:0:4136:e378:8000:63bf:34ff:fe8e' // client 203.0.1.113
    expect(addressBudgetKey(clientA)).toBe('192.0.2.45')
    expect(addressBudgetKey(clientB)).toBe('203.0.1.113')
    expect(ipv6NetworkKeys(clientA)).toBeUndefined()
    // Control: 2001:db8::/32 and 2001:1::/32 are not Teredo.
    expect(addressBudgetKey('2001:db8:4136:e378:8000:63bf:3fff:fdd2')).toBe('2001:db8:4136:e378::/64')
    expect(addressBudgetKey('2001:1:4136:e378:8000:63bf:3fff:fdd2')).toBe('2001:1:4136:e378::/64')
  })

  it('6to4 2002:V4ADDR::/48: an IPv4 holder gets no more than its IPv4 budget by also sending through its 6to4 /48', async () => {
    const h = await createHarness({ clock: fakeClock() })
    // 192.0.2.1 spends its per-address budget for the minute.
    expect(await spend(h, 'v4', '192.0.2.1', PER_MINUTE + 1)).toEqual([...Array(PER_MINUTE).fill(200), 429])
    // Its 6to4 /48 (2002:c000:201::/48) is derived from that same IPv4 address alone: it was a
    // fresh /64, /56 and /48 budget (20 + 30 + 60 a minute on top of the IPv4's 20).
    expect(await spend(h, '6to4', '2002:c000:201:1::1', 3)).toEqual([429, 429, 429])
    expect(addressBudgetKey('2002:c000:201:ffff:1:2:3:4')).toBe('192.0.2.1')
    expect(ipv6NetworkKeys('2002:c000:201:1::1')).toBeUndefined()
    // Control: another IPv4 holder's 6to4 /48 is its own budget.
    expect((await otpInit(h, '6to4-other@example.com', '2002:c000:202::1')).status).toBe(200)
  })
})

describe('spellings of one address', () => {
  it('uppercase, leading zeros, zone ids, expanded and mapped forms share one budget behind a trusted proxy', async () => {
    const h = await createHarness({ clock: fakeClock() })
    const v6 = [
      '2001:db8:aa:bb::1',
      '2001:DB8:AA:BB::2',
      '2001:0db8:00aa:00bb:0000:0000:0000:0003',
      'fe80::1%eth0',
    ]
    // fe80::1%eth0 is another /64: only the first three spellings (one /64) are counted here.
    const statuses: number[] = []
    for (let i = 0; i < PER_MINUTE + 3; i++)
      statuses.push((await viaProxy(h, `sp-${i}@spray.example`, v6[i % 3]!)).status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(PER_MINUTE)
    const v4 = ['192.0.2.9', '::ffff:192.0.2.9', '[::ffff:192.0.2.9]:443', '192.0.2.9:8080']
    const mapped: number[] = []
    for (let i = 0; i < PER_MINUTE + 4; i++)
      mapped.push((await viaProxy(h, `mp-${i}@spray.example`, v4[i % 4]!)).status)
    expect(mapped.filter((status) => status === 200)).toHaveLength(PER_MINUTE)
    // The hex form of a mapped or NAT64 address, and a zone id, key as the IPv4 address.
    for (const spelling of [
      '::FFFF:C000:0209',
      '0:0:0:0:0:ffff:c000:209',
      '64:FF9B::C000:209',
      '::ffff:192.0.2.9%eth0',
    ])
      expect(addressBudgetKey(spelling)).toBe('192.0.2.9')
    // A client-written X-Forwarded-For prefix is ignored (the proxy appends the real peer).
    const spoofed = await viaProxy(h, 'spoof@spray.example', '198.51.100.200, 192.0.2.9')
    expect(spoofed.status).toBe(429)
  })
})
