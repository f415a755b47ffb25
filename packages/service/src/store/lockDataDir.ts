// Node only: one process per data dir, held by the kernel.
import { createHash } from 'node:crypto'
import { mkdirSync, statSync, unlinkSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A data dir this process holds: nobody else can take it until `release` or this process ends. */
export interface DataDirLock {
  readonly dir: string
  /** Lets another process take the data dir. */
  release(): Promise<void>
  /**
   * Answers requests other processes send over the lock (`askDataDirHolder`), such as a backup
   * taken by `latchkey-service backup` while this process holds the data dir.
   */
  serve?(handler: (request: string) => Promise<string>): void
}

/** Longest request or answer line over the lock. */
const MAX_LINE = 4096

/** The data directory is the owner's only. */
const DIR_MODE = 0o700

/**
 * Where the lock of the data dir with this identity lives: a socket name only one process can
 * listen on, which the kernel frees when that process ends however it ends (kill -9, a crash, a
 * container restart), so no pid is ever compared. Linux: an abstract socket (no file at all);
 * Windows: a named pipe; elsewhere a socket file in the temporary directory (a dead holder's
 * socket refuses connections, and the next start replaces it; two starts replacing the same dead
 * holder's file at one instant could both bind, which the abstract socket and the pipe rule out).
 */
function addressOf(identity: string): { path: string; file: boolean } {
  const name = `latchkey-data-dir-${createHash('sha256').update(identity).digest('hex').slice(0, 32)}`
  if (process.platform === 'linux') return { path: `\0${name}`, file: false }
  if (process.platform === 'win32') return { path: `\\\\?\\pipe\\${name}`, file: false }
  return { path: join(tmpdir(), `${name}.sock`), file: true }
}

/** Listens on `path`: true, or false when another socket is bound to it. */
function listen(server: Server, path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening)
      if (error.code === 'EADDRINUSE') resolve(false)
      else reject(error)
    }
    const onListening = () => {
      server.off('error', onError)
      resolve(true)
    }
    server.once('error', onError)
    server.once('listening', onListening)
    server.listen(path)
  })
}

/**
 * Who is listening on `path`: the pid its holder answers with (undefined if it said nothing in
 * time), or `free` when nobody is (the holder ended since, or left a socket file behind).
 */
function askHolder(path: string): Promise<{ pid?: string } | 'free'> {
  return new Promise((resolve) => {
    const socket = connect(path)
    let connected = false
    let answer = ''
    socket.setEncoding('utf8')
    // The holder answers from its event loop, which its own start may keep busy for seconds (module
    // loading, the integrity check) on a loaded machine.
    socket.setTimeout(20_000, () => socket.destroy())
    socket.on('connect', () => {
      connected = true
    })
    socket.on('data', (chunk: string) => {
      answer += chunk
      // The pid is all this asks: hang up, so a holder that takes requests stops waiting for one.
      if (answer.includes('\n')) socket.end()
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      if (!connected) resolve('free')
      else resolve(/^\d+\n$/.test(answer) ? { pid: answer.trim() } : {})
    })
  })
}

/**
 * Takes the data dir `dir` for this process (creating the directory, 0700, and nothing in it), or
 * throws naming the process that holds it. Taken in one step (a bind), so of two processes started
 * at the same instant exactly one gets it. The lock is keyed by the directory itself (device and
 * inode), so another path to it is the same data dir. It does not reach across machines or
 * network namespaces (two containers sharing a volume): give each its own data dir.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE })
  const { dev, ino } = statSync(dir, { bigint: true })
  const { path, file } = addressOf(`${dev}:${ino}`)
  // Whoever connects hears the holder's pid; one who hangs up first costs nothing. Once a handler
  // is set, a line sent after it is a request, answered with one line.
  let handler: ((request: string) => Promise<string>) | undefined
  const server = createServer((socket) => {
    socket.on('error', () => undefined)
    if (!handler) {
      socket.end(`${process.pid}\n`)
      return
    }
    const serve = handler
    socket.write(`${process.pid}\n`)
    socket.setEncoding('utf8')
    let request = ''
    socket.on('end', () => socket.end())
    socket.on('data', (chunk: string) => {
      request += chunk
      if (request.length > MAX_LINE) socket.destroy()
      const end = request.indexOf('\n')
      if (end < 0) return
      socket.removeAllListeners('data')
      serve(request.slice(0, end)).then(
        (answer) => socket.end(`${answer.replace(/\n/g, ' ')}\n`),
        (error: Error) => socket.end(`error ${String(error?.message ?? error).replace(/\n/g, ' ')}\n`),
      )
    })
  })
  // Holding the lock never keeps the process alive.
  server.unref()
  for (let attempt = 1; ; attempt++) {
    if (await listen(server, path)) break
    const holder = await askHolder(path)
    if (holder !== 'free')
      throw new Error(
        `${dir} is in use by ${holder.pid ? `process ${holder.pid}` : 'another process'}; stop it or pick another --data-dir`,
      )
    // Nobody listens: the holder ended between the bind and the question, or (a socket file) died
    // and left its file, which is removed before the bind is tried again.
    if (attempt >= 5) throw new Error(`cannot take the lock of ${dir}: ${path} is bound but nobody listens`)
    if (file)
      try {
        unlinkSync(path)
      } catch {}
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt))
  }
  let released: Promise<void> | undefined
  return {
    dir,
    release: () => {
      released ??= new Promise<void>((resolve) => server.close(() => resolve()))
      return released
    },
    serve: (serve) => {
      handler = serve
    },
  }
}

/**
 * Sends `request` to the process holding the data dir `dir` and resolves with its one-line answer,
 * or `free` when no process holds it. Rejects when the holder takes no requests or does not answer
 * within `timeoutMs`.
 */
export async function askDataDirHolder(
  dir: string,
  request: string,
  timeoutMs = 600_000,
): Promise<string | 'free'> {
  const { dev, ino } = statSync(dir, { bigint: true })
  const { path } = addressOf(`${dev}:${ino}`)
  return new Promise((resolve, reject) => {
    const socket = connect(path)
    let connected = false
    let answer = ''
    let sent = false
    socket.setEncoding('utf8')
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`the process holding ${dir} did not answer in time`)),
    )
    socket.on('connect', () => {
      connected = true
    })
    socket.on('data', (chunk: string) => {
      answer += chunk
      if (!sent && answer.includes('\n')) {
        sent = true
        answer = answer.slice(answer.indexOf('\n') + 1)
        socket.write(`${request}\n`)
      }
    })
    socket.on('error', (error) => {
      if (connected) reject(error)
    })
    socket.on('close', () => {
      if (!connected) resolve('free')
      else if (sent && answer.endsWith('\n')) resolve(answer.trim())
      else reject(new Error(`the process holding ${dir} takes no requests (an older latchkey-service?)`))
    })
  })
}
