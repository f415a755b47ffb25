// A tiny DNS server on loopback UDP for the SSRF tests: answers A and AAAA questions for the names
// it was given (each lookup of a name takes the next answer of its list, the last one repeated,
// so a rebinding name answers public then private), NXDOMAIN for anything else. Bounded: it
// answers at most `maxQueries` questions and closes by itself after `lifetimeMs` (a test that
// forgets it leaves nothing behind). Points a resolver at it with `dns.Resolver#setServers`.
import { createSocket } from 'node:dgram'
import type { AddressInfo } from 'node:net'
import { isIPv4, isIPv6 } from 'node:net'

export interface DnsStub {
  /** `127.0.0.1:<port>`, for `setServers`. */
  server: string
  /** Every question asked, as `<name> <A|AAAA>`. */
  queries: string[]
  close(): Promise<void>
}

const TYPE_A = 1
const TYPE_AAAA = 28

/** Reads the question's name (labels) starting at byte 12; returns it and where the question's type is. */
function questionOf(message: Buffer): { name: string; typeAt: number } | undefined {
  const labels: string[] = []
  let at = 12
  while (at < message.length) {
    const length = message[at]!
    if (length === 0) return { name: labels.join('.').toLowerCase(), typeAt: at + 1 }
    if (length > 63 || at + 1 + length > message.length) return undefined
    labels.push(message.subarray(at + 1, at + 1 + length).toString('latin1'))
    at += 1 + length
  }
  return undefined
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::')
  const parts = (text: string) => (text ? text.split(':') : [])
  const left = parts(head)
  const right = parts(tail)
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return Buffer.from(
    groups.flatMap((group) => [Number.parseInt(group, 16) >> 8, Number.parseInt(group, 16) & 255]),
  )
}

function answer(
  query: Buffer,
  question: { typeAt: number },
  addresses: string[] | undefined,
  type: number,
): Buffer {
  const header = Buffer.from(query.subarray(0, 12))
  const questionBytes = query.subarray(12, question.typeAt + 4)
  const records = (addresses ?? [])
    .filter((address) => (type === TYPE_A ? isIPv4(address) : isIPv6(address)))
    .map((address) => {
      const data = type === TYPE_A ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address)
      const record = Buffer.alloc(12)
      record.writeUInt16BE(0xc00c, 0) // the name: a pointer to the question's
      record.writeUInt16BE(type, 2)
      record.writeUInt16BE(1, 4) // IN
      record.writeUInt32BE(0, 6) // TTL 0: never cached
      record.writeUInt16BE(data.length, 10)
      return Buffer.concat([record, data])
    })
  // QR, opcode 0, AA, RD copied, RA; RCODE 3 (NXDOMAIN) for an unknown name.
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | 0x0080 | (addresses ? 0 : 3), 2)
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(records.length, 6)
  header.writeUInt16BE(0, 8)
  header.writeUInt16BE(0, 10)
  return Buffer.concat([header, questionBytes, ...records])
}

/**
 * Starts the stub. `answers[name]` is a list of answers, one per lookup of the name (its A and
 * AAAA questions each take the next of their own), the last one repeated.
 */
export async function startDnsStub(
  answers: Record<string, string[][]>,
  options: { maxQueries?: number; lifetimeMs?: number } = {},
): Promise<DnsStub> {
  const maxQueries = options.maxQueries ?? 200
  const socket = createSocket('udp4')
  const queries: string[] = []
  const served = new Map<string, number>()
  let closed = false
  const close = () =>
    new Promise<void>((resolve) => {
      if (closed) return resolve()
      closed = true
      clearTimeout(timer)
      socket.close(() => resolve())
    })
  const timer = setTimeout(() => void close(), options.lifetimeMs ?? 30_000)
  timer.unref()
  socket.on('message', (message, from) => {
    if (closed || queries.length >= maxQueries || message.length < 17) return
    const question = questionOf(message)
    if (!question || question.typeAt + 4 > message.length) return
    const type = message.readUInt16BE(question.typeAt)
    if (type !== TYPE_A && type !== TYPE_AAAA) return
    queries.push(`${question.name} ${type === TYPE_A ? 'A' : 'AAAA'}`)
    const list = answers[question.name]
    let addresses: string[] | undefined
    if (list) {
      // Counted per name and type: a lookup's A and AAAA questions (in either order) get answer n.
      const key = `${question.name} ${type}`
      const index = served.get(key) ?? 0
      addresses = list[Math.min(index, list.length - 1)]
      served.set(key, index + 1)
    }
    socket.send(answer(message, question, addresses, type), from.port, from.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  return { server: `127.0.0.1:${(socket.address() as AddressInfo).port}`, queries, close }
}
