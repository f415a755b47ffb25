// An end user's webhook host names are asked of DNS directly, never through the system resolver:
// getaddrinfo runs on libuv's thread pool, where host-name lookups get at most half the threads (2
// of Node's default 4), each held until DNS answers whatever the try's timeout, and every other
// host-name lookup of the process (the SMS provider, the RPC nodes, OIDC token endpoints, CAPTCHA,
// new database connections by name) queued behind them. One sign-up's 10 endpoints at names whose
// DNS answered in 4 s (every delivery succeeding: nothing backed off or paused) kept another
// person's SMS sign-in code from the provider ~7.4 s (sometimes failing at the 10 s connect
// timeout): the slow-receiver fix (job slots, slowReceivers.test.ts) reopened by the name lookup.
// The operator's own endpoints (a top-level organization's, with an allow list) keep the system
// resolver: a receiver named only in the hosts file is reached; an end user's is not.
//
// The service and a DNS stub run in a child (endUserDnsChild.ts) inside `unshare -m`, with
// endUserDns/resolv.conf (`nameserver 127.0.0.1`) and endUserDns/hosts bind-mounted over
// /etc/resolv.conf and /etc/hosts in that child's mount namespace only: loopback only, nothing of
// the machine changed. It needs root (CAP_SYS_ADMIN) and util-linux `unshare`: skipped when not
// root; as root (CI) it runs, and fails if the namespace cannot be made. About 10 s; the child
// exits by itself after 45 s and is killed after 50 s.
import { spawn, spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
const service = join(here, '../..')
const files = join(here, 'endUserDns')
const MOUNTS = `mount --bind ${files}/resolv.conf /etc/resolv.conf && mount --bind ${files}/hosts /etc/hosts`

interface ChildResult {
  hostsFile: { operator: string[]; endUser: string[]; endUserAsked: boolean }
  smsBefore: number[]
  smsDuring: number[]
  smsFailuresDuring: string[]
  attackerDeliveries: number
}

function runChild(): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'unshare',
      [
        '-m',
        '--',
        'sh',
        '-c',
        `${MOUNTS} && exec "${process.execPath}" --import tsx ${join(here, 'endUserDnsChild.ts')}`,
      ],
      {
        cwd: service,
        // The default pool (4 threads), as `latchkey-service start` runs.
        env: Object.fromEntries(
          Object.entries(process.env).filter(([name]) => name !== 'UV_THREADPOOL_SIZE'),
        ),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.stderr.on('data', (chunk) => (err += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      const line = out.trim().split('\n').at(-1)
      if (code !== 0 || !line) return reject(new Error(`child exited ${code}: ${err.slice(-2000)}`))
      resolve(JSON.parse(line))
    })
  })
}

const root = process.getuid?.() === 0

describe.skipIf(!root)("an end user's webhook host names and the process's other lookups", () => {
  it('can make the mount namespace (unshare -m, bind mounts)', () => {
    const made = spawnSync('unshare', ['-m', '--', 'sh', '-c', MOUNTS], { timeout: 5000, encoding: 'utf8' })
    expect(made.error, String(made.error)).toBeUndefined()
    expect(made.status, made.stderr).toBe(0)
  })

  it("do not hold back another person's SMS code, and only the operator's endpoints use the hosts file", async () => {
    const result = await runChild()
    // Before the attacker's endpoints: a code reaches the provider in well under a second.
    for (const ms of result.smsBefore) expect(ms).toBeLessThan(2000)
    // While one sign-up's 10 endpoints resolve (each lookup answered in 4 s, each delivery delivered):
    expect(result.smsFailuresDuring, 'the SMS provider call failed while the endpoints resolved').toEqual([])
    expect(
      result.smsDuring[0],
      `another person's SMS code reached the provider ${result.smsDuring[0]} ms after it was asked for`,
    ).toBeLessThan(2000)
    // The operator's own receiver, named only in the hosts file, is reached (the system resolver);
    // an end user's endpoint at that name is asked of DNS, which does not know it: never delivered.
    expect(result.hostsFile.operator).toContain('delivered')
    expect(result.hostsFile.endUser.length).toBeGreaterThan(0)
    expect(result.hostsFile.endUser).not.toContain('delivered')
    expect(result.hostsFile.endUserAsked).toBe(true)
    // The end user's slow names still resolve: DNS is asked at the system's nameservers.
    expect(result.attackerDeliveries).toBeGreaterThan(0)
  }, 60_000)
})
