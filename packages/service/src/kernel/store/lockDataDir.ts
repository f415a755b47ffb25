// Node only: one process per data dir, held by the kernel.
import { createHash } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A data dir this process holds: nobody else can take it until `release` or this process ends. */
export interface DataDirLock {
  readonly dir: string
  /** Lets another process take the data dir. */
  release(): Promise<void>
  /**
   * Answers requests other processes of this process's own user send (`askDataDirHolder`), such as
   * a backup taken by `latchkey-service backup` while this process holds the data dir: over a
   * socket file (0600, in a 0700 directory) in the data dir, never over the lock itself.
   */
  serve?(handler: (request: string) => Promise<string>): Promise<void>
}

/** The socket file requests are sent to, in the data dir (while a holder takes requests). */
export const REQUEST_SOCKET = 'latchkey.sock'

/** Longest socket path the kernel takes (sun_path: 108 bytes on Linux, 104 elsewhere, with its NUL). */
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103

/** Longest request or answer line over the lock. */
const MAX_LINE = 4096

/** How long a connection to the lock may stay open once it was told the holder's pid. */
const LOCK_ANSWER_MS = 5_000

/** The data directory is the owner's only. */
const DIR_MODE = 0o700

/**
 * Where the lock of the data dir with this identity lives: a socket name only one process can
 * listen on, which the kernel frees when that process ends however it ends (kill -9, a crash, a
 * container restart), so no pid is ever compared. Linux: an abstract socket (no file at all);
 * Windows: a named pipe; elsewhere a socket file in the temporary directory (a dead holder's
 * socket refuses connections, and the next start replaces it; two starts replacing the same dead
 * holder's file at one instant could both bind, which the abstract socket and the pipe rule out).
 * Any local user can connect to an abstract socket (it has no file, so no permissions): the lock
 * only ever answers its holder's pid and reads nothing; requests go to `REQUEST_SOCKET`.
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
  // Whoever connects hears the holder's pid and nothing else: the lock reads no request, since
  // anyone on the machine can reach it.
  const server = createServer((socket) => {
    socket.on('error', () => undefined)
    socket.end(`${process.pid}\n`)
    // Whatever the other end sends is dropped, and one that keeps the connection open is cut: a
    // connection left open would hold up `release`.
    socket.resume()
    socket.setTimeout(LOCK_ANSWER_MS, () => socket.destroy())
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
  let requests: RequestServer | undefined
  let released: Promise<void> | undefined
  return {
    dir,
    release: () => {
      released ??= (async () => {
        await requests?.close()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      })()
      return released
    },
    serve: async (handler) => {
      if (released) throw new Error(`the lock of ${dir} was released`)
      requests ??= await serveRequests(dir, handler)
    },
  }
}

interface RequestServer {
  close(): Promise<void>
}

/**
 * Where the request socket of `dir` is reached from this process: the path in the data dir when it
 * fits in a socket address; past that, on Linux, the same file through a descriptor of the data
 * dir (`/proc/self/fd/N/latchkey.sock`, `close` closes it), elsewhere a short path in a directory
 * of this user's only under the temporary directory.
 */
function requestAddress(dir: string): { path: string; close(): void } {
  const direct = join(dir, REQUEST_SOCKET)
  if (Buffer.byteLength(direct) <= MAX_SOCKET_PATH) return { path: direct, close: () => undefined }
  if (process.platform === 'linux') {
    const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY)
    return { path: `/proc/self/fd/${fd}/${REQUEST_SOCKET}`, close: () => closeSync(fd) }
  }
  const { dev, ino } = statSync(dir, { bigint: true })
  const own = join(tmpdir(), `latchkey-${process.getuid?.() ?? 'user'}`)
  mkdirSync(own, { recursive: true, mode: DIR_MODE })
  const stat = lstatSync(own)
  if (!stat.isDirectory() || (process.getuid && stat.uid !== process.getuid()) || (stat.mode & 0o077) !== 0)
    throw new Error(`${own} is not a directory of this user's only; cannot take requests for ${dir}`)
  const name = createHash('sha256').update(`${dev}:${ino}`).digest('hex').slice(0, 32)
  return { path: join(own, `${name}.sock`), close: () => undefined }
}

/**
 * Takes requests for the data dir `dir` on its request socket: bound in a new directory only this
 * user can enter (so nobody else connects before its mode is set), made 0600, then renamed into
 * place over whatever a dead holder left. Only this user (and root) can connect to it.
 */
async function serveRequests(
  dir: string,
  handler: (request: string) => Promise<string>,
): Promise<RequestServer> {
  const server = createServer((socket) => answer(socket, handler))
  server.unref()
  const address = requestAddress(dir)
  const parent = address.path.slice(0, address.path.lastIndexOf('/'))
  const scratch = mkdtempSync(join(parent, '.latchkey-sock-'))
  const bound = join(scratch, 's')
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(bound, () => {
        server.off('error', reject)
        resolve()
      })
    })
    chmodSync(bound, 0o600)
    renameSync(bound, address.path)
  } catch (error) {
    server.close()
    address.close()
    throw error
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        try {
          // Node removes the path it bound, which was renamed: remove the one requests went to.
          unlinkSync(address.path)
        } catch {}
        address.close()
      }),
  }
}

/** One request on a connection to the request socket: one line in, one line out. */
function answer(socket: Socket, handler: (request: string) => Promise<string>): void {
  socket.on('error', () => undefined)
  socket.setEncoding('utf8')
  let request = ''
  socket.on('end', () => socket.end())
  socket.on('data', (chunk: string) => {
    request += chunk
    if (request.length > MAX_LINE) socket.destroy()
    const end = request.indexOf('\n')
    if (end < 0) return
    socket.removeAllListeners('data')
    handler(request.slice(0, end)).then(
      (answer) => socket.end(`${answer.replace(/\n/g, ' ')}\n`),
      (error: Error) => socket.end(`error ${String(error?.message ?? error).replace(/\n/g, ' ')}\n`),
    )
  })
}

/**
 * Sends `request` to the process holding the data dir `dir` and resolves with its one-line answer,
 * or `free` when no process holds it. Rejects when the holder takes no requests (or not from this
 * user: it runs as another) or does not answer within `timeoutMs`.
 */
export async function askDataDirHolder(
  dir: string,
  request: string,
  timeoutMs = 600_000,
): Promise<string | 'free'> {
  const { dev, ino } = statSync(dir, { bigint: true })
  const address = requestAddress(dir)
  try {
    const sent = await sendRequest(address.path, request, timeoutMs, dir)
    if (sent !== 'unreachable') return sent
  } finally {
    address.close()
  }
  // Nobody takes requests: the data dir is free, or its holder takes none.
  const holder = await askHolder(addressOf(`${dev}:${ino}`).path)
  if (holder === 'free') return 'free'
  throw new Error(
    `the process holding ${dir}${holder.pid ? ` (${holder.pid})` : ''} takes no requests from this user (an older latchkey-service, or one running as another user?)`,
  )
}

/** One request over the request socket at `path`: the answer, or `unreachable` when nobody listens. */
function sendRequest(
  path: string,
  request: string,
  timeoutMs: number,
  dir: string,
): Promise<string | 'unreachable'> {
  return new Promise((resolve, reject) => {
    const socket = connect(path)
    let connected = false
    let answer = ''
    socket.setEncoding('utf8')
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`the process holding ${dir} did not answer in time`)),
    )
    socket.on('connect', () => {
      connected = true
      socket.write(`${request}\n`)
    })
    socket.on('data', (chunk: string) => {
      answer += chunk
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (connected) reject(error)
      else if (error.code === 'EACCES' || error.code === 'EPERM')
        reject(new Error(`the process holding ${dir} runs as another user: run this as that user`))
    })
    socket.on('close', () => {
      if (!connected) resolve('unreachable')
      else if (answer.endsWith('\n')) resolve(answer.trim())
      else reject(new Error(`the process holding ${dir} hung up without an answer`))
    })
  })
}
