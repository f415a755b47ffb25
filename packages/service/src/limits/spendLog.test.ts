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
  withRefSettled,
} from './spendLog.ts'

const sum = (entries: SpendEntry[]) => entries.reduce((total, entry) => total + BigInt(entry.amount), 0n)

/** Up to 10 entries, none joined but those of one millisecond. */
const TO_THE_MS = { max: 10, slice: 1, joinFrom: 0 }

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
      // Half the seeds join spends of one slice of time past `joinFrom` entries (`append`).
      const rule =
        seed % 2 === 0
          ? { max, slice: 1 + Math.floor(next() * 600), joinFrom: Math.floor(next() * (max + 1)) }
          : { max, slice: 1, joinFrom: 0 }
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
          log = append(log, entry, rule)
          // The plain model: a spend without references adds into the last entry (at the later
          // time) when of the same millisecond, or, past `joinFrom` entries, of the same slice.
          const last = plain.at(-1)
          const joins =
            last &&
            (last.at === now ||
              (plain.length >= rule.joinFrom &&
                Math.floor(now / rule.slice) === Math.floor(last.at / rule.slice)))
          if (last && joins && !last.ref && !ref)
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

  it('joins a spend to the last entry of its slice of time, at the later time, only past joinFrom entries: an entry never spans two slices', () => {
    const rule = { max: 10, slice: 1000, joinFrom: 2 }
    let log = append(EMPTY_LOG, { at: 1000, amount: '1' }, rule)
    // One entry: below joinFrom, a spend of the same slice still makes an entry.
    log = append(log, { at: 1500, amount: '2' }, rule)
    // Two: a spend of the last entry's slice joins it, which moves to its time.
    log = append(log, { at: 1900, amount: '4' }, rule)
    // The next slice starts an entry, even 200 ms later; its own later spend joins it.
    log = append(log, { at: 2100, amount: '8' }, rule)
    log = append(log, { at: 2999, amount: '16' }, rule)
    // 501 ms after that, but in the next slice: no chain of joins carries a spend further.
    log = append(log, { at: 3500, amount: '32' }, rule)
    // A send's reference keeps an entry of its own, and nothing joins it.
    log = append(log, { at: 3600, amount: '64', ref: 'send/1' }, rule)
    log = append(log, { at: 3700, amount: '128' }, rule)
    expectConsistent(log)
    expect(entriesOf(log)).toEqual([
      { at: 1000, amount: '1' },
      { at: 1900, amount: '6' },
      { at: 2999, amount: '24' },
      { at: 3500, amount: '32' },
      { at: 3600, amount: '64', ref: 'send/1' },
      { at: 3700, amount: '128' },
    ])
    // Nothing frees earlier than it would have: the spend of 1500 frees with 1900's, less than a slice later.
    expect(expire(log, 1900).total).toBe('254')
    expect(expire(log, 1901).total).toBe('248')
  })

  it('keeps entries in time order when a spend is dated before the last (clocks of two instances): it frees later, never earlier', () => {
    let log = append(EMPTY_LOG, { at: 1000, amount: '1', ref: 'a' }, TO_THE_MS)
    log = append(log, { at: 990, amount: '2', ref: 'b' }, TO_THE_MS)
    expect(entriesOf(log)).toEqual([
      { at: 1000, amount: '1', ref: 'a' },
      { at: 1000, amount: '2', ref: 'b' },
    ])
    expect(expire(log, 1000)).toEqual(log)
    expect(expire(log, 1001)).toEqual(EMPTY_LOG)
  })

  it('lowers the entry a mined send names by what its fee came under its cap: its time kept, never below 0, nothing for another name', () => {
    let log = append(EMPTY_LOG, { at: 1000, amount: '5' }, TO_THE_MS)
    log = append(log, { at: 1200, amount: '110', ref: 'send/1' }, TO_THE_MS)
    log = append(log, { at: 1300, amount: '7', ref: 'send/2' }, TO_THE_MS)
    const lowered = withRefSettled(log, 'send/1', 40n)!
    expectConsistent(lowered)
    expect(entriesOf(lowered)).toEqual([
      { at: 1000, amount: '5' },
      { at: 1200, amount: '70', ref: 'send/1' },
      { at: 1300, amount: '7', ref: 'send/2' },
    ])
    expect(entriesOf(withRefSettled(log, 'send/2', 9n)!)[2]).toEqual({ at: 1300, amount: '0', ref: 'send/2' })
    expect(withRefSettled(log, 'send/3', 1n)).toBeUndefined()
    expect(withRefSettled(log, 'send/1', 0n)).toBeUndefined()
  })

  it('raises the entry a mined send names by what its fee came over what was reserved (an L1 data fee that rose): its time kept', () => {
    let log = append(EMPTY_LOG, { at: 1000, amount: '5' }, TO_THE_MS)
    log = append(log, { at: 1200, amount: '110', ref: 'send/1' }, TO_THE_MS)
    const raised = withRefSettled(log, 'send/1', -15n)!
    expectConsistent(raised)
    expect(entriesOf(raised)).toEqual([
      { at: 1000, amount: '5' },
      { at: 1200, amount: '125', ref: 'send/1' },
    ])
    expect(raised.total).toBe('130')
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
