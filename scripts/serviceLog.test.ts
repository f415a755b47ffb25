// The filter `npm start` puts on the service's output (scripts/serviceLog.mjs), fed with the lines
// the service's own logger writes: pino-pretty (what `dev` logs by default) and JSON.
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { logLevelOf, serviceLogFilter } from './serviceLog.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** The lines the service's logger (packages/service/src/observability/logger.ts) writes for a few events. */
function loggedBy(format: 'pretty' | 'json'): string[] {
  const program = `
    import { createLogger } from './packages/service/src/observability/logger.ts'
    const log = createLogger({ format: '${format}', level: 'debug', fd: 1 })
    log.info({ method: 'POST', path: '/public/v1/submit/otp_login', status: 401, errorCode: 'OTP_INVALID' }, 'request')
    log.debug({ event: 'store.retry' }, 'transaction rerun')
    log.warn({ event: 'store.unavailable' }, 'database unavailable')
    log.error({ err: { message: 'disk full', code: 'ENOSPC' } }, 'backup failed')
    log.info({ event: 'server.draining', detail: 'errors: none' }, 'draining')
    log.flush()
  `
  return execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((line) => line !== '')
}

/** The level each message above is logged at. */
const LEVEL_OF = {
  request: 'info',
  'transaction rerun': 'debug',
  'database unavailable': 'warn',
  'backup failed': 'error',
  draining: 'info',
}

const shown = (lines: string[]) => lines.filter(serviceLogFilter())

describe.each(['pretty', 'json'] as const)('the service log filter on %s lines', (format) => {
  const lines = loggedBy(format)

  it('reads each line’s level', () => {
    // By message, not by position: the logger's asynchronous destination does not promise the
    // order in which lines written in one tick reach the pipe.
    const read = lines
      .filter((line) => logLevelOf(line) !== undefined)
      .map((line) => [Object.keys(LEVEL_OF).find((message) => line.includes(message)), logLevelOf(line)])
    expect(read.sort()).toEqual(Object.entries(LEVEL_OF).sort())
  })

  it('shows warnings and errors, not an INFO request line that carries an errorCode', () => {
    const request = lines.find((line) => line.includes('OTP_INVALID'))!
    // What the filter used to be: any line with "error" in it.
    expect(/error/i.test(request)).toBe(true)
    const out = shown(lines).join('\n')
    expect(out).not.toContain('OTP_INVALID')
    expect(out).not.toContain('draining')
    expect(out).not.toContain('transaction rerun')
    expect(out).toContain('database unavailable')
    expect(out).toContain('backup failed')
    expect(out).toContain('disk full')
  })
})

describe('the service log filter', () => {
  it('keeps an error’s continuation lines and drops an INFO line’s', () => {
    const lines = [
      '[18:18:39.045] ERROR: backup failed ',
      '    err: {',
      '      "message": "disk full"',
      '    }',
      '[18:18:39.046] INFO: request {"status":401,"errorCode":"OTP_INVALID"}',
      '    extra: "an error word"',
    ]
    expect(shown(lines)).toEqual(lines.slice(0, 4))
  })

  it('shows what is not a log line: a crash and its stack trace', () => {
    const lines = [
      '[18:18:39.046] INFO: request {"status":200}',
      'Error: listen EADDRINUSE: address already in use 127.0.0.1:8787',
      '    at Server.setupListenHandle [as _listen2] (node:net:1908:16)',
      '',
    ]
    expect(shown(lines)).toEqual(lines.slice(1, 3))
  })

  it('treats pino’s numeric levels like their names', () => {
    expect(logLevelOf('{"level":30,"msg":"request","errorCode":"X"}')).toBe('info')
    expect(logLevelOf('{"level":50,"msg":"boom"}')).toBe('error')
    expect(logLevelOf('{"not":"a log line"}')).toBeUndefined()
    expect(logLevelOf('{ not json')).toBeUndefined()
  })
})
