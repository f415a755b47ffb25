import { describe, expect, it } from 'vitest'
import { ApiError } from '../base/errors.ts'
import { postgresBackend } from './backends/postgresBackend.ts'
import { sqliteBackend } from './backends/sqliteBackend.ts'
import { classify, isDatabaseError } from './databaseErrors.ts'

const pgError = (code: string, message = 'error') => Object.assign(new Error(message), { code })

describe('database errors', () => {
  it('each backend classifies the errors its driver throws, and only those', () => {
    const cases: [Error, ReturnType<typeof classify>, ReturnType<typeof classify>][] = [
      // [error, as SQLite, as PostgreSQL]
      [new Error('database or disk is full'), 'unavailable', 'other'],
      [new Error('disk I/O error'), 'unavailable', 'other'],
      [new Error('UNIQUE constraint failed: activities.fingerprint'), 'other', 'other'],
      [pgError('40001', 'could not serialize access'), 'other', 'retry'],
      [pgError('40P01', 'deadlock detected'), 'other', 'retry'],
      [pgError('25P02', 'current transaction is aborted'), 'other', 'retry'],
      [pgError('23505', 'duplicate key value'), 'other', 'unique'],
      [pgError('57P01', 'terminating connection'), 'other', 'unavailable'],
      [pgError('57P05', 'terminating connection due to idle-session timeout'), 'other', 'unavailable'],
      [pgError('25P03', 'terminating connection due to idle-in-transaction timeout'), 'other', 'unavailable'],
      [pgError('25P01', 'no active SQL transaction'), 'other', 'other'],
      [pgError('ECONNREFUSED', 'connect ECONNREFUSED'), 'other', 'unavailable'],
      [new Error('Connection terminated unexpectedly'), 'other', 'unavailable'],
      [new Error('Query read timeout'), 'other', 'unavailable'],
      [pgError('28P01', 'password authentication failed for user "latchkey"'), 'other', 'unavailable'],
      [pgError('28000', 'role "latchkey" is not permitted to log in'), 'other', 'unavailable'],
      [pgError('3D000', 'database "latchkey" does not exist'), 'other', 'unavailable'],
      [new Error('handler failed'), 'other', 'other'],
    ]
    for (const [error, sqlite, postgres] of cases) {
      expect([error.message, sqliteBackend.classify(error)]).toEqual([error.message, sqlite])
      expect([error.message, postgresBackend.classify(error)]).toEqual([error.message, postgres])
    }
  })

  it('an error is a database error once a store classified it as one; ApiErrors and the rest never are', () => {
    const outage = pgError('08006', 'connection failure')
    expect(isDatabaseError(outage)).toBe(false)
    expect(classify(postgresBackend, outage)).toBe('unavailable')
    expect(isDatabaseError(outage)).toBe(true)
    // Classified once: the kind is remembered, whichever backend asks next.
    expect(classify(sqliteBackend, outage)).toBe('unavailable')

    const own = new Error('handler failed')
    expect(classify(postgresBackend, own)).toBe('other')
    expect(isDatabaseError(own)).toBe(false)
    const api = Object.assign(new ApiError('FIELD_INVALID', 'database is locked'), { code: '40001' })
    expect(classify(sqliteBackend, api)).toBe('other')
    expect(classify(postgresBackend, api)).toBe('other')
    expect(isDatabaseError(api)).toBe(false)
    expect(isDatabaseError('disk I/O error')).toBe(false)
  })
})
