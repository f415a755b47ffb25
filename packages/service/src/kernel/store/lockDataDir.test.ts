import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, expect, it } from 'vitest'
import { askDataDirHolder, lockDataDir, REQUEST_SOCKET } from './lockDataDir.ts'

const root = mkdtempSync(join(tmpdir(), 'latchkey-lock-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

it('one holder per data dir, whatever the path to it; released, it can be taken again; nothing is created in it', async () => {
  const dir = join(root, 'a', 'data')
  const lock = await lockDataDir(dir)
  expect(readdirSync(dir)).toEqual([])
  await expect(lockDataDir(dir)).rejects.toThrow(`${dir} is in use by process ${process.pid}`)
  mkdirSync(join(root, 'links'))
  symlinkSync(dir, join(root, 'links', 'data'))
  await expect(lockDataDir(join(root, 'links', 'data'))).rejects.toThrow(
    `is in use by process ${process.pid}`,
  )
  // Another data dir is another lock.
  const other = await lockDataDir(join(root, 'b'))
  await lock.release()
  await lock.release()
  const again = await lockDataDir(dir)
  await again.release()
  await other.release()
})

it('of many takers at once, exactly one gets the data dir', async () => {
  const dir = join(root, 'race')
  const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => lockDataDir(dir)))
  const held = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []))
  expect(held).toHaveLength(1)
  for (const o of outcomes)
    if (o.status === 'rejected') expect(String(o.reason)).toContain('is in use by process')
  await held[0]!.release()
})

it('answers requests over a socket file in the data dir, also when its path is too long for a socket address', async () => {
  const short = join(root, 'served')
  const long = join(root, 'x'.repeat(60), 'y'.repeat(60), 'data')
  for (const dir of [short, long]) {
    const lock = await lockDataDir(dir)
    await expect(askDataDirHolder(dir, 'ping')).rejects.toThrow('takes no requests')
    await lock.serve!(async (request) => `pong ${request}`)
    expect(await askDataDirHolder(dir, 'ping')).toBe('pong ping')
    // The socket is the user's only, in the data dir, and nothing else is left there.
    expect(readdirSync(dir)).toEqual([REQUEST_SOCKET])
    expect(statSync(join(dir, REQUEST_SOCKET)).mode & 0o777).toBe(0o600)
    await lock.release()
    expect(readdirSync(dir)).toEqual([])
    expect(await askDataDirHolder(dir, 'ping')).toBe('free')
  }
})

// The attack: any local user could connect to the lock (an abstract socket: no file, no
// permissions, its name in /proc/net/unix) and order the root-run service to write a backup where
// it chose. Now the lock reads nothing, and the request socket's mode keeps others out even when
// the data dir's own mode lets them in.
it.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  'another local user (uid 65534) gets no request through the lock nor the request socket',
  async () => {
    const dir = join(root, 'victim', 'data')
    const lock = await lockDataDir(dir)
    const asked: string[] = []
    await lock.serve!(async (request) => {
      asked.push(request)
      return 'ok'
    })
    // The data dir's own mode lets everyone in: the socket file's must still keep them out.
    for (const path of [root, join(root, 'victim'), dir]) chmodSync(path, 0o755)
    const { dev, ino } = statSync(dir, { bigint: true })
    const name = `latchkey-data-dir-${createHash('sha256').update(`${dev}:${ino}`).digest('hex').slice(0, 32)}`
    expect(readFileSync('/proc/net/unix', 'utf8')).toContain(`@${name}`)
    const steal = join(root, 'steal.sqlite')
    const attack = `
      const net = require('node:net')
      const request = 'backup ' + JSON.stringify(${JSON.stringify(steal)}) + '\\n'
      const tryOne = (path) => new Promise((resolve) => {
        const socket = net.connect(path)
        let answer = ''
        socket.setEncoding('utf8')
        socket.on('connect', () => socket.write(request))
        socket.on('data', (chunk) => { answer += chunk })
        socket.on('error', (error) => resolve({ error: error.code }))
        socket.on('close', () => resolve({ answer }))
        setTimeout(() => { socket.destroy(); resolve({ answer, timedOut: true }) }, 3000).unref()
      })
      Promise.all([tryOne('\\0' + ${JSON.stringify(name)}), tryOne(${JSON.stringify(join(dir, REQUEST_SOCKET))})])
        .then((results) => process.stdout.write(JSON.stringify(results)))
    `
    const { stdout } = await promisify(execFile)('setpriv', [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      process.execPath,
      '-e',
      attack,
    ])
    const [viaLock, viaSocket] = JSON.parse(stdout) as { answer?: string; error?: string }[]
    // The lock tells who holds it, and that is all.
    expect(viaLock).toEqual({ answer: `${process.pid}\n` })
    expect(viaSocket).toEqual({ error: 'EACCES' })
    expect(asked).toEqual([])
    expect(existsSync(steal)).toBe(false)
    // Its own user still gets answers.
    expect(await askDataDirHolder(dir, 'backup "x"')).toBe('ok')
    expect(asked).toEqual(['backup "x"'])
    await lock.release()
  },
)
