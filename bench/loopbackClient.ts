/**
 * A lean HTTP/1.1 load client for the service benchmarks: one kept-alive TCP connection per
 * simulated client, each request serialized to bytes before the clock starts, one request in flight
 * per connection, responses parsed just enough to read the status and the body. Node's `http`
 * client costs about half a millisecond of CPU per request here, which on a 2-core machine shared
 * with the service would make the bench measure its own client; this costs a few microseconds.
 */
import { connect, type Socket } from 'node:net'

export interface Reply {
  status: number
  text: string
}

/** A POST with a JSON body and an `X-Stamp` header, as bytes ready to write. */
export function serializePost(url: string, body: string, stamp: string): Buffer {
  const { host, pathname, search } = new URL(url)
  const head =
    `POST ${pathname}${search} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nX-Stamp: ${stamp}\r\n\r\n`
  return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)])
}

const HEADER_END = Buffer.from('\r\n\r\n')

/** One kept-alive connection; `send` writes a serialized request and resolves with its reply. */
export class Connection {
  readonly #socket: Socket
  readonly #ready: Promise<void>
  #buffer = Buffer.alloc(0)
  #pending: { resolve(reply: Reply): void; reject(error: Error): void } | undefined
  /** The server closed it (its keep-alive timeout on a starved machine): a send fails at once, never waits. */
  #closed = false

  constructor(url: string) {
    const { hostname, port } = new URL(url)
    this.#socket = connect({ host: hostname, port: Number(port), noDelay: true })
    this.#ready = new Promise((resolve, reject) => {
      this.#socket.once('connect', resolve)
      this.#socket.once('error', reject)
    })
    // A connection that fails before it is used fails its first `send`, not the process.
    this.#ready.catch(() => undefined)
    this.#socket.on('data', (chunk) => {
      this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk
      this.#parse()
    })
    const fail = (error: Error) => {
      const pending = this.#pending
      this.#pending = undefined
      pending?.reject(error)
    }
    this.#socket.on('error', fail)
    this.#socket.on('close', () => {
      this.#closed = true
      fail(new Error('socket closed by the server'))
    })
  }

  async send(request: Buffer): Promise<Reply> {
    await this.#ready
    if (this.#pending) throw new Error('one request at a time per connection')
    // Written to a closed socket, a request is lost without an 'error' or 'close' event: the
    // reply it waited for never came, and the run with it (the webhooks bench's hang).
    if (this.#closed) throw new Error('socket closed by the server')
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject }
      this.#socket.write(request, (error) => {
        if (!error || this.#pending?.reject !== reject) return
        this.#pending = undefined
        reject(error)
      })
    })
  }

  /** The server closed it: every later `send` fails at once (open a new one). */
  get closed(): boolean {
    return this.#closed
  }

  close(): void {
    this.#socket.destroy()
  }

  #parse(): void {
    const end = this.#buffer.indexOf(HEADER_END)
    if (end < 0 || !this.#pending) return
    const head = this.#buffer.subarray(0, end).toString('latin1')
    const status = Number(head.slice(9, 12))
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
    let body: Buffer | undefined
    let rest = 0
    if (length) {
      const size = Number(length[1])
      if (this.#buffer.length < end + 4 + size) return
      body = this.#buffer.subarray(end + 4, end + 4 + size)
      rest = end + 4 + size
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const parts: Buffer[] = []
      let at = end + 4
      for (;;) {
        const line = this.#buffer.indexOf('\r\n', at)
        if (line < 0) return
        const size = Number.parseInt(this.#buffer.subarray(at, line).toString('latin1'), 16)
        if (this.#buffer.length < line + 2 + size + 2) return
        if (size === 0) {
          rest = line + 4
          break
        }
        parts.push(this.#buffer.subarray(line + 2, line + 2 + size))
        at = line + 2 + size + 2
      }
      body = Buffer.concat(parts)
    } else {
      this.#pending.reject(new Error(`reply without a length: ${head.split('\r\n')[0]}`))
      this.#pending = undefined
      return
    }
    this.#buffer = this.#buffer.subarray(rest)
    const pending = this.#pending
    this.#pending = undefined
    pending.resolve({ status, text: body.toString('utf8') })
  }
}
