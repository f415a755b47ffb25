// The usage row's spend log (spendLog.ts) against the plain list of spends it stands for: random
// runs of spends, expiries, merges and releases, compared step by step.
import { describe, expect, it } from 'vitest'
import type { SpendEntry } from '../kernel/store/model.ts'
import { seededRandom } from '../testing/seededRandom.ts'
import {
  append,
  EMPTY_LOG,
  entriesOf,
  expire,
  logOf,
  logOfEntries,
  type SpendLog,
  withoutRef,
  withRefLowered,
} from './spendLog.ts'

const sum = (entries: SpendEntry[]) => entries.reduce((total, entry) => total + BigInt(entry.amount), 0n)

/** The log is what its entries say: total, count and last time agree with them. */
function expectConsistent(log: SpendLog) {
  const entries = entriesOf(log)
  expect(BigInt(log.total)).toBe(sum(entries))
  expect(log.count).toBe(entries.length)
  if (entries.length > 0) expect(log.lastAt).toBe(entries.at(-1)!.at)
  expect(logOfEntries(entries)).toEqual(log)
}

describe('the spend log', () => {
  it('matches the plain list of spends through random spends, expiries and releases', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = seededRandom(seed)
      const max = 4 + Math.floor(next() * 12)
      let log: SpendLog = EMPTY_LOG
      let plain: SpendEntry[] = []
      let now = 1_764_000_000_000
      for (let step = 0; step < 300; step++) {
        const roll = next()
        if (roll < 0.6) {
          // Often the same millisecond; sometimes a send (with a reference) and a huge amount.
          now += next() < 0.3 ? 0 : Math.floor(next() * 1000)
          const ref = next() < 0.25 ? `send-${seed}-${step}:;%` : undefined
          const amount =
            next() < 0.1 ? (10n ** 30n + BigInt(step)).toString() : String(1 + Math.floor(next() * 9))
          const entry: SpendEntry = { at: now, amount, ...(ref ? { ref } : {}) }
          log = append(log, entry, max)
          // The plain model: a same-millisecond spend without references adds into the last entry.
          const last = plain.at(-1)
          if (last && last.at === now && !last.ref && !ref)
            plain = [
              ...plain.slice(0, -1),
              { at: now, amount: (BigInt(last.amount) + BigInt(amount)).toString() },
            ]
          else plain = [...plain, entry]
          while (plain.length > max) {
            const [a, b] = plain as [SpendEntry, SpendEntry]
            plain = [
              { at: b.at, amount: (BigInt(a.amount) + BigInt(b.amount)).toString() },
              ...plain.slice(2),
            ]
          }
        } else if (roll < 0.85) {
          const start = now - Math.floor(next() * 5000)
          log = expire(log, start)
          plain = plain.filter((entry) => entry.at >= start)
        } else {
          const withRef = plain.filter((entry) => entry.ref)
          const ref = withRef.length > 0 && next() < 0.8 ? withRef[0]!.ref! : 'nobody'
          const released = withoutRef(log, ref)
          const kept = plain.filter((entry) => entry.ref !== ref)
          expect(released === undefined).toBe(kept.length === plain.length)
          if (released) log = released
          plain = kept
        }
        expect(entriesOf(log)).toEqual(plain)
        expectConsistent(log)
      }
    }
  })

  it('keeps entries in time order when a spend is dated before the last (clocks of two instances): it frees later, never earlier', () => {
    let log = append(EMPTY_LOG, { at: 1000, amount: '1', ref: 'a' }, 10)
    log = append(log, { at: 990, amount: '2', ref: 'b' }, 10)
    expect(entriesOf(log)).toEqual([
      { at: 1000, amount: '1', ref: 'a' },
      { at: 1000, amount: '2', ref: 'b' },
    ])
    expect(expire(log, 1000)).toEqual(log)
    expect(expire(log, 1001)).toEqual(EMPTY_LOG)
  })

  it('lowers the entry a mined send names by what its fee came under its cap: its time kept, never below 0, nothing for another name', () => {
    let log = append(EMPTY_LOG, { at: 1000, amount: '5' }, 10)
    log = append(log, { at: 1200, amount: '110', ref: 'send/1' }, 10)
    log = append(log, { at: 1300, amount: '7', ref: 'send/2' }, 10)
    const lowered = withRefLowered(log, 'send/1', 40n)!
    expectConsistent(lowered)
    expect(entriesOf(lowered)).toEqual([
      { at: 1000, amount: '5' },
      { at: 1200, amount: '70', ref: 'send/1' },
      { at: 1300, amount: '7', ref: 'send/2' },
    ])
    expect(entriesOf(withRefLowered(log, 'send/2', 9n)!)[2]).toEqual({ at: 1300, amount: '0', ref: 'send/2' })
    expect(withRefLowered(log, 'send/3', 1n)).toBeUndefined()
    expect(withRefLowered(log, 'send/1', 0n)).toBeUndefined()
  })

  it('reads a row written before the log (an entries array) and an empty or missing row', () => {
    const entries = [
      { at: 5, amount: '3', ref: 'x' },
      { at: 9, amount: '4' },
    ]
    const old = { id: 'l', organizationId: 'o', entries, createdAt: 1, updatedAt: 1 }
    expect(entriesOf(logOf(old))).toEqual(entries)
    expect(logOf(old)).toMatchObject({ total: '7', count: 2, lastAt: 9 })
    expect(logOf(undefined)).toEqual(EMPTY_LOG)
    expect(
      entriesOf(logOf({ id: 'l', organizationId: 'o', ...EMPTY_LOG, createdAt: 1, updatedAt: 1 })),
    ).toEqual([])
  })
})
