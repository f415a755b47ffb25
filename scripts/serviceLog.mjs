// Which lines of the local service's output `npm start` shows without `--verbose`: its warnings and
// errors, chosen by the level the logger wrote (pino-pretty's `[time] WARN:`, or a JSON line's
// `"level"`), never by a word in the line: a request line carrying `"errorCode"` is still INFO.
// A log line's indented continuation lines (pino-pretty prints an error's fields below it) follow
// its decision; any other line (a crash's message and stack trace) is shown.

const RANK = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 }
const PRETTY = /^\[[^\]]+\]\s+([A-Z]+)\b/

/** The level of one log line (`info`, `warn`…), or undefined when the line is not a log line. */
export function logLevelOf(line) {
  const pretty = PRETTY.exec(line)
  if (pretty) return RANK[pretty[1].toLowerCase()] ? pretty[1].toLowerCase() : undefined
  if (!line.startsWith('{')) return undefined
  try {
    const { level } = JSON.parse(line)
    if (typeof level === 'string') return RANK[level] ? level : undefined
    // pino's numbers, for a logger configured without level labels.
    if (typeof level === 'number')
      return Object.keys(RANK).findLast((name) => RANK[name] <= level) ?? undefined
  } catch {}
  return undefined
}

/**
 * A filter for the service's output, one line at a time: true for the lines to show. Stateful (a
 * continuation line follows the log line above it), so make one per stream.
 */
export function serviceLogFilter({ minimum = 'warn' } = {}) {
  let showing = true
  let inLogLine = false
  return (line) => {
    const level = logLevelOf(line)
    if (level) {
      inLogLine = true
      showing = RANK[level] >= RANK[minimum]
    } else if (inLogLine && /^\s/.test(line)) {
      // An indented continuation of the log line above: same decision.
    } else {
      inLogLine = false
      showing = line.trim() !== ''
    }
    return showing
  }
}
