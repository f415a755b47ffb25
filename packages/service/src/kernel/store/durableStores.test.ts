import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DATABASE_FILE, loadMasterKeyFile, openDataDir } from './durableStores.ts'

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-durable-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

describe('openDataDir: integrity', () => {
  it('refuses a database file with a damaged page, naming it and saying to restore from a backup, and writes nothing', async () => {
    const dir = join(tempDir(), 'data')
    const store = await openDataDir(dir)
    await store.transaction(async (tx) => {
      for (let i = 0; i < 400; i++)
        await tx.put('pluginRows', {
          id: `row-${String(i).padStart(4, '0')}`,
          kind: 'filler',
          data: { text: 'x'.repeat(1000) },
          createdAt: 1,
          updatedAt: 1,
        })
    })
    await store.close()
    const path = join(dir, DATABASE_FILE)
    const pageSize = 4096
    expect(statSync(path).size).toBeGreaterThan(60 * pageSize)
    // Scribble over a page in the middle of the rows (not one the start reads).
    const fd = openSync(path, 'r+')
    writeSync(fd, Buffer.alloc(512, 0xa5), 0, 512, 50 * pageSize)
    closeSync(fd)
    const before = sha256(path)

    await expect(openDataDir(dir)).rejects.toThrow(
      new RegExp(
        `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged \\(.+\\)\\. Nothing was written to it\\. .*restore the data dir from a backup`,
      ),
    )
    expect(sha256(path)).toBe(before)
    // The refusal let go of the data dir; skipping the check opens it (to copy out what is readable).
    const unchecked = await openDataDir(dir, { integrityCheck: false })
    expect(await unchecked.get('pluginRows', 'row-0000')).toBeDefined()
    await unchecked.close()
    // A file over the size checked at start opens unchecked, and says so once on stderr.
    const lines: string[] = []
    const write = process.stderr.write
    process.stderr.write = ((chunk: string) => {
      lines.push(String(chunk))
      return true
    }) as typeof process.stderr.write
    try {
      const large = await openDataDir(dir, { integrityCheckMaxBytes: 60 * pageSize })
      await large.close()
    } finally {
      process.stderr.write = write
    }
    expect(lines.filter((line) => line.includes(path))).toHaveLength(1)
    expect(lines.join('')).toMatch(/opened without quick_check\. Check it offline/)
  })

  it('opens a sound data dir again, checked', async () => {
    const dir = join(tempDir(), 'data')
    const store = await openDataDir(dir)
    await store.transaction((tx) =>
      tx.put('pluginRows', { id: 'kept', kind: 'k', data: {}, createdAt: 1, updatedAt: 1 }),
    )
    await store.close()
    const again = await openDataDir(dir)
    expect(await again.get('pluginRows', 'kept')).toBeDefined()
    await again.close()
  })
})

describe('loadMasterKeyFile', () => {
  it('creates the key under a name of its own: a file planted at a fixed temporary name is not written through', () => {
    const dir = tempDir()
    const outside = join(tempDir(), 'outside')
    writeFileSync(outside, '')
    symlinkSync(outside, join(dir, 'master.key.tmp'))
    const key = loadMasterKeyFile(join(dir, 'master.key'))
    expect(Buffer.from(key).toString('hex')).toBe(readFileSync(join(dir, 'master.key'), 'utf8').trim())
    expect(readFileSync(outside, 'utf8')).toBe('')
    expect((statSync(join(dir, 'master.key')).mode & 0o777).toString(8)).toBe('600')
    expect(readdirSync(dir).sort()).toEqual(['master.key', 'master.key.tmp'])
  })

  it("reads a key file the operator keeps without changing its mode or its folder's (a secret mount, /etc, /dev)", () => {
    const dir = tempDir()
    chmodSync(dir, 0o755)
    const path = join(dir, 'master.key')
    writeFileSync(path, `${'ab'.repeat(32)}\n`)
    // Set after writing: the process's umask (which another test may have narrowed) does not apply.
    chmodSync(path, 0o640)
    expect(Buffer.from(loadMasterKeyFile(path, undefined)).toString('hex')).toBe('ab'.repeat(32))
    expect((statSync(dir).mode & 0o777).toString(8)).toBe('755')
    expect((statSync(path).mode & 0o777).toString(8)).toBe('640')
    // Not a key: refused, and left as it was.
    const empty = join(dir, 'empty')
    writeFileSync(empty, '')
    chmodSync(empty, 0o644)
    expect(() => loadMasterKeyFile(empty, undefined)).toThrow(/is not a 64-hex-character key/)
    expect((statSync(empty).mode & 0o777).toString(8)).toBe('644')
    expect((statSync(dir).mode & 0o777).toString(8)).toBe('755')
  })

  it('four processes creating one new key file at once all read the same key, and leave no temporary file', async () => {
    const dir = tempDir()
    const path = join(dir, 'keys', 'master.key')
    const module = new URL('./durableStores.ts', import.meta.url).pathname
    // Each process loads the module, says `ready`, and waits for the instant on its stdin; once
    // all four are ready they get the same instant, a moment ahead, and start together.
    const script = `
      import { loadMasterKeyFile } from ${JSON.stringify(module)}
      process.stdout.write('ready\\n')
      let input = ''
      process.stdin.setEncoding('utf8')
      for await (const chunk of process.stdin) {
        input += chunk
        if (input.includes('\\n')) break
      }
      const at = Number(input.trim())
      while (Date.now() < at) {}
      process.stdout.write(Buffer.from(loadMasterKeyFile(${JSON.stringify(path)}, undefined)).toString('hex'))
    `
    const children = Array.from({ length: 4 }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      let out = ''
      let err = ''
      let markReady: () => void = () => {}
      const ready = new Promise<void>((resolve) => {
        markReady = resolve
      })
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk
        if (out.startsWith('ready\n')) markReady()
      })
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        err += chunk
      })
      const key = new Promise<string>((resolve, reject) =>
        child.on('exit', (code) =>
          code === 0 ? resolve(out.slice('ready\n'.length)) : reject(new Error(`exit ${code}: ${err}`)),
        ),
      )
      // A child that dies before it is ready fails the wait below instead of hanging it.
      return { child, ready: Promise.race([ready, key.then(() => undefined)]), key }
    })
    await Promise.all(children.map(({ ready }) => ready))
    const at = Date.now() + 200
    for (const { child } of children) child.stdin.end(`${at}\n`)
    const keys = await Promise.all(children.map(({ key }) => key))
    expect(new Set(keys).size).toBe(1)
    expect(keys[0]).toBe(readFileSync(path, 'utf8').trim())
    expect(readdirSync(join(dir, 'keys'))).toEqual(['master.key'])
  }, 120_000)
})
