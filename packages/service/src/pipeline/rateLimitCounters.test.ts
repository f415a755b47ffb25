import { describe, expect, it } from 'vitest'
import { memoryCounters } from './rateLimitCounters.ts'

const charge = (key: string) => ({ key, intervalMs: 1_000, toleranceMs: 0 })

describe('memoryCounters', () => {
  it('lets one request per interval in and refuses the next', async () => {
    const counters = memoryCounters()
    expect(await counters.charge([charge('a')], 0)).toEqual([{ allowed: true }])
    expect(await counters.charge([charge('a')], 10)).toEqual([{ allowed: false, retryAfterMs: 990 }])
    expect(await counters.charge([charge('a')], 1_000)).toEqual([{ allowed: true }])
  })

  it('keeps at most maxBuckets under a flood of fresh keys, and never drops the key being hammered', async () => {
    const counters = memoryCounters({ maxBuckets: 100 })
    await counters.charge([charge('victim')], 0)
    for (let i = 0; i < 5_000; i++) {
      // The attacker's own key is refused each time and still counted as used…
      expect((await counters.charge([charge('victim')], 1 + i / 10))[0]!.allowed).toBe(false)
      // …while a fresh key per request tries to push it out of the map.
      await counters.charge([charge(`flood-${i}`)], 1 + i / 10)
    }
    // Still refused: the victim's bucket survived 5,000 fresh keys in a map of 100.
    expect((await counters.charge([charge('victim')], 600))[0]!.allowed).toBe(false)
    // The oldest fresh keys were dropped and start again with a full bucket.
    expect(await counters.charge([charge('flood-0')], 600)).toEqual([{ allowed: true }])
  })
})
