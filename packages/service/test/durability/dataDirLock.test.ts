// The data-dir lock is held by the kernel, not guessed from a pid: of two services started at the
// same instant on one new data dir exactly one serves; a pid file naming another live process is
// no lock; a holder killed with kill -9 frees the dir at once, even while it is a zombie.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, expect, it } from 'vitest'
import { cliCommand } from '../support/cliEntry.ts'
import { killAll, root, type ServiceProcess, startService } from '../support/serviceProcess.ts'
import { removeDir, tempDir } from './tempDir.ts'

afterEach(killAll)
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})
const newDir = (prefix: string) => {
  const dir = tempDir(prefix)
  dirs.push(dir)
  return join(dir, 'data')
}

it('5 × two services started at the same instant on one empty data dir: one serves, the other exits naming it', async () => {
  for (let round = 0; round < 5; round++) {
    const dir = newDir('race')
    const outcomes = await Promise.allSettled([
      startService({ args: ['--data-dir', dir] }),
      startService({ args: ['--data-dir', dir] }),
    ])
    const serving = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []))
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []))
    expect(serving, refused.join('\n')).toHaveLength(1)
    const winner = serving[0] as ServiceProcess
    expect(refused[0]).toContain(`service exited (1) before it was ready`)
    expect(refused[0]).toContain(`${dir} is in use by process ${winner.pid}`)
    expect((await fetch(`${winner.info.baseUrl}/health`)).status).toBe(200)
    // One master key, written once, and no temporary file left by the loser.
    expect(readdirSync(dir).filter((name) => name.includes('.tmp'))).toEqual([])
    expect(readFileSync(join(dir, 'master.key'), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/)
    expect(await winner.stop()).toBe(0)
  }
}, 600_000)

it('a LOCK file naming an unrelated live process does not keep the service from starting', async () => {
  const dir = newDir('stale-pid')
  const first = await startService({ args: ['--data-dir', dir] })
  expect(await first.stop()).toBe(0)
  // What an earlier version left, naming a process that is alive (this test's own runner).
  writeFileSync(join(dir, 'LOCK'), String(process.pid))
  const next = await startService({ args: ['--data-dir', dir] })
  expect(next.info.organizationId).toBe(first.info.organizationId)
  expect(readFileSync(join(dir, 'LOCK'), 'utf8').trim()).toBe(String(next.pid))
  expect(await next.stop()).toBe(0)
}, 240_000)

it('after kill -9 the data dir is free at once, even while the dead holder is a zombie its parent never reaped', async () => {
  const dir = newDir('zombie')
  // The service's parent execs `sleep`, which never reaps it: once killed it stays a zombie, and
  // its pid stays "alive" to kill(pid, 0).
  const parent = spawn(
    'bash',
    [
      '-c',
      '"$0" "$@" & echo "pid $!" >&2; exec sleep 600',
      process.execPath,
      ...cliCommand(),
      'dev',
      '--port',
      '0',
      '--json',
      '--data-dir',
      dir,
    ],
    { cwd: root, env: { ...process.env, NODE_ENV: 'development' }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  try {
    let stderr = ''
    parent.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    const line = await new Promise<string>((resolve, reject) => {
      parent.stdout.setEncoding('utf8').once('data', (chunk: string) => resolve(chunk))
      parent.once('exit', () => reject(new Error(`the service did not start\n${stderr}`)))
    })
    const { organizationId } = JSON.parse(line.split('\n')[0]!) as { organizationId: string }
    const pid = Number(/pid (\d+)/.exec(stderr)?.[1])
    process.kill(pid, 'SIGKILL')
    if (process.platform === 'linux') {
      // Wait until it is a zombie: dead, its pid still taken.
      for (let i = 0; i < 200; i++) {
        const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0]
        if (state === 'Z') break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0]).toBe('Z')
    }
    expect(() => process.kill(pid, 0)).not.toThrow()
    const next = await startService({ args: ['--data-dir', dir] })
    expect(next.info.organizationId).toBe(organizationId)
    expect(await next.stop()).toBe(0)
  } finally {
    parent.kill('SIGKILL')
  }
}, 240_000)
