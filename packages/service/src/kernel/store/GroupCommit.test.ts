// GroupCommit's lanes (PostgreSQL's lock groups) on a fake connection: the transactions of one key
// run in the order they came, in groups of at most 64; no group of a key forms before the group of
// it before has sent its commit (the database's lock then orders the rest); a key's transaction
// queued behind a waiting one of the same key waits for it, while other keys go by.
import type { DatabaseConnection } from 'kysely'
import { describe, expect, it } from 'vitest'
import { postgresBackend } from './backends/postgresBackend.ts'
import { GroupCommit, type GroupCommitOptions } from './GroupCommit.ts'

/** What every fake group commit here shares: PostgreSQL's backend, a plain `begin`, no outage. */
const fakeOptions: Omit<GroupCommitOptions, 'connect' | 'lanes'> = {
  backend: postgresBackend,
  begin: 'begin',
  fatal: () => false,
  committed: () => undefined,
  guard: (run) => run(),
}

/** A connection whose every statement is answered by `answer` (it never streams). */
const fakeConnection = (answer: (sql: string) => Promise<unknown>, extra: object = {}) =>
  ({
    ...extra,
    executeQuery: (query: { sql: string }) => answer(query.sql),
    streamQuery: () => {
      throw new Error('not used')
    },
  }) as unknown as DatabaseConnection

/** A statement's answer, a turn of the timers later. */
const answered = () => new Promise((resolve) => setTimeout(() => resolve({ rows: [] }), 1))

/** What ran: each transaction's name and the group (connection) it ran in. */
function lanes(count: number) {
  const ran: { name: string; group: number }[] = []
  const groups: { keys: readonly string[]; size: number }[] = []
  const held = new Set<string>()
  let overlaps = 0
  let next = 0
  const commit = new GroupCommit({
    ...fakeOptions,
    lanes: count,
    async connect(use, keys) {
      for (const key of keys) if (held.has(key)) overlaps++
      for (const key of keys) held.add(key)
      const group = next++
      groups.push({ keys, size: 0 })
      // Every statement answers a turn of the timers later, so the queue fills while a group runs.
      // Its keys are the group's until its commit is sent (`GroupCommit` gives them back then).
      let holding = true
      const connection = fakeConnection(
        (sql) => {
          if (sql === 'commit' && holding) {
            holding = false
            for (const key of keys) held.delete(key)
          }
          return answered()
        },
        { group },
      )
      try {
        return await use(connection)
      } finally {
        if (holding) for (const key of keys) held.delete(key)
      }
    },
  })
  const run = (name: string, keys: string[]) =>
    commit.run(
      async (connection) => {
        const { group } = connection as unknown as { group: number }
        ran.push({ name, group })
        groups[group]!.size++
        return name
      },
      1,
      { keys },
    )
  return { run, ran, groups, overlaps: () => overlaps }
}

describe('GroupCommit lanes', () => {
  it('one key: in the order they came, groups of at most 64, one group at a time', async () => {
    const { run, ran, groups, overlaps } = lanes(4)
    const names = Array.from({ length: 200 }, (_, n) => `t${n}`)
    expect(await Promise.all(names.map((name) => run(name, ['a'])))).toEqual(names)
    expect(ran.map((entry) => entry.name)).toEqual(names)
    expect(Math.max(...groups.map((group) => group.size))).toBeLessThanOrEqual(64)
    expect(groups.length).toBeLessThan(200)
    expect(overlaps()).toBe(0)
  })

  it('many keys: each key in order, keys spread over the lanes, no key in two running groups', async () => {
    const { run, ran, groups, overlaps } = lanes(4)
    const work = Array.from({ length: 300 }, (_, n) => ({ name: `t${n}`, key: `k${n % 30}` }))
    await Promise.all(work.map(({ name, key }) => run(name, [key])))
    for (let k = 0; k < 30; k++)
      expect(
        ran.filter((entry) => Number(entry.name.slice(1)) % 30 === k).map((entry) => entry.name),
      ).toEqual(work.filter((_, n) => n % 30 === k).map((entry) => entry.name))
    expect(overlaps()).toBe(0)
    // The first group takes its share of the 30 keys waiting (a quarter), not all of them.
    expect(groups[0]!.keys.length).toBeLessThanOrEqual(8)
    expect(Math.max(...groups.map((group) => group.size))).toBeLessThanOrEqual(64)
  })

  it('a transaction of a key that waits holds back the later ones of that key, not of others', async () => {
    const { run, ran } = lanes(2)
    // `a1` runs; then `ab` waits for `a`; `b2` names `b`, which `ab` waits with, so it runs after
    // `ab` though `b` is free; `c` goes by them all.
    const first = run('a1', ['a'])
    await new Promise((resolve) => setTimeout(resolve, 0))
    await Promise.all([first, run('ab', ['a', 'b']), run('b2', ['b']), run('c', ['c'])])
    const order = ran.map((entry) => entry.name)
    expect(order.indexOf('a1')).toBeLessThan(order.indexOf('ab'))
    expect(order.indexOf('ab')).toBeLessThan(order.indexOf('b2'))
    expect(order).toContain('c')
  })
})

describe('GroupCommit locks', () => {
  it('a group gives its locks back behind its commit; if that commit fails, takes them again before its transactions rerun alone', async () => {
    const log: string[] = []
    let commits = 0
    let locked = false
    const commit = new GroupCommit({
      ...fakeOptions,
      lanes: 2,
      async connect(use) {
        locked = true
        log.push('lock')
        const connection = fakeConnection((sql) => {
          log.push(sql)
          // The group's commit fails (a write of it broke a unique index): it rolled back.
          if (sql === 'commit' && ++commits === 1)
            return new Promise((_, reject) => setTimeout(() => reject(new Error('unique')), 1))
          return answered()
        })
        const unlock = () => {
          if (!locked) return
          locked = false
          log.push('unlock')
        }
        try {
          return await use(connection, Promise.resolve(), {
            unlock,
            relock: async () => {
              if (locked) return
              locked = true
              log.push('relock')
            },
          })
        } finally {
          unlock()
        }
      },
    })
    // What each transaction's work saw of the locks, by name.
    const held: Record<string, boolean[]> = { t1: [], t2: [] }
    const run = (name: 't1' | 't2') =>
      commit.run(
        async () => {
          held[name]!.push(locked)
          return name
        },
        1,
        { keys: ['a'] },
      )
    expect(await Promise.all([run('t1'), run('t2')])).toEqual(['t1', 't2'])
    // One group of both: its commit, the unlock right behind it; then each alone, locked again,
    // and the locks given back once, after the last.
    expect(log).toEqual([
      'lock',
      'begin',
      'commit',
      'unlock',
      'rollback',
      'relock',
      'begin',
      'commit',
      'begin',
      'commit',
      'unlock',
    ])
    expect(held).toEqual({ t1: [true, true], t2: [true, true] })
  })
})
