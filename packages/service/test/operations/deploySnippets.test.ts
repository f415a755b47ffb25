// The systemd unit and the nginx snippet of docs/operations.md, as an operator would paste them:
// `systemd-analyze verify` must accept the unit without a warning, and nginx (Debian's
// nginx-light, installed when missing) must accept the snippet and then serve through it: two
// services behind it, one stopped with SIGTERM (its drain), and every request still answered 200
// by the other; and a `start` service trusting it believes only the X-Forwarded-For it appends (a
// client's own `Forwarded` or X-Forwarded-For prefix buys no fresh per-address budget). Only the
// addresses, ports and certificate paths are replaced, each replacement checked, so an edit to
// the docs that the test cannot follow fails here instead of passing.

import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { type RequestOptions, request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { aptInstall } from '../../../../scripts/apt.mjs'
import { freePort } from '../../../../scripts/postgres.mjs'
import { testKey } from '../../src/testing/testKeys.ts'
import { killAll as killCli, runCli, startCli } from '../production/cli.ts'
import { killAll, root, type ServiceProcess, startService } from '../support/serviceProcess.ts'

const docs = readFileSync(join(root, 'docs/operations.md'), 'utf8')

/** The body of the one fenced block of `language` in docs/operations.md. */
function block(language: string): string {
  const blocks = [...docs.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))]
  expect(blocks, `docs/operations.md has one \`\`\`${language} block`).toHaveLength(1)
  return blocks[0]![1]!
}

/** `text` with `pattern` replaced, failing when the pattern is no longer there. */
function replaceChecked(text: string, pattern: RegExp, replacement: string): string {
  expect(text, `the snippet still has ${pattern}`).toMatch(pattern)
  return text.replace(pattern, replacement)
}

const work = mkdtempSync(join(tmpdir(), 'latchkey-deploy-'))
const services: ServiceProcess[] = []
const nginxes: ReturnType<typeof spawn>[] = []

afterAll(async () => {
  for (const nginx of nginxes) nginx.kill('SIGQUIT')
  killAll()
  killCli()
  await new Promise((resolve) => setTimeout(resolve, 200))
  rmSync(work, { recursive: true, force: true })
})

describe('the systemd unit in docs/operations.md', () => {
  it.runIf(existsSync('/usr/bin/systemd-analyze'))('passes systemd-analyze verify without a warning', () => {
    const unit = join(work, 'latchkey.service')
    const text = block('ini')
    expect(text).toMatch(/^# \/etc\/systemd\/system\/latchkey\.service$/m)
    writeFileSync(unit, text)
    const verified = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' })
    // verify exits 0 on keys it ignores (a typo'd key, a bad signal name): any output is a finding.
    expect(`${verified.stdout}${verified.stderr}`.trim()).toBe('')
    expect(verified.status).toBe(0)
    // The stop timeout outlasts the default drain, or the supervisor kills a draining instance.
    const stopSeconds = Number(/^TimeoutStopSec=(\d+)$/m.exec(text)?.[1])
    expect(stopSeconds).toBeGreaterThan(20)
    expect(text).toMatch(/^KillSignal=SIGTERM$/m)
  })
})

function ensureNginx(): string {
  const binary = '/usr/sbin/nginx'
  if (!existsSync(binary))
    aptInstall(['nginx-light'], {
      what: 'deploySnippets.test',
      hint: "install nginx (Debian: apt-get install nginx-light) to test docs/operations.md's snippet",
    })
  return binary
}

/** A request through nginx over TLS (its certificate is our self-signed one). */
function send(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        rejectUnauthorized: false,
        servername: 'wallet.example.com',
        timeout: 10_000,
      } satisfies RequestOptions,
      (res) => {
        let body = ''
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.on('timeout', () =>
      req.destroy(new Error(`${options.method ?? 'GET'} ${path} through nginx timed out`)),
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

/** GET `path` through nginx over TLS. */
const get = (port: number, path: string) => send(port, path)

/**
 * nginx running docs/operations.md's snippet in `dir` (its own certificate, config and temp
 * folders), with the two upstreams pointed at `upstreamPorts`; resolves with its port once it
 * answers `/readyz` 200.
 */
async function runSnippet(dir: string, upstreamPorts: [string, string]): Promise<number> {
  const binary = ensureNginx()
  const listenPort = await freePort()
  mkdirSync(dir, { recursive: true })
  chmodSync(work, 0o755)
  chmodSync(dir, 0o755)
  const cert = join(dir, 'wallet.pem')
  const key = join(dir, 'wallet.key')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=wallet.example.com',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  )

  let snippet = block('nginx')
  snippet = replaceChecked(snippet, /server 10\.0\.0\.11:8787/, `server 127.0.0.1:${upstreamPorts[0]}`)
  snippet = replaceChecked(snippet, /server 10\.0\.0\.12:8787/, `server 127.0.0.1:${upstreamPorts[1]}`)
  snippet = replaceChecked(snippet, /listen 443 ssl;/, `listen 127.0.0.1:${listenPort} ssl;`)
  snippet = replaceChecked(snippet, /\/etc\/ssl\/wallet\.example\.com\.pem/, cert)
  snippet = replaceChecked(snippet, /\/etc\/ssl\/wallet\.example\.com\.key/, key)
  const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`
  const conf = join(dir, 'nginx.conf')
  writeFileSync(
    conf,
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 64; }',
      'http {',
      '  access_log off;',
      `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
      snippet,
      '}',
      '',
    ].join('\n'),
  )

  const tested = spawnSync(binary, ['-t', '-c', conf, '-p', dir, '-e', join(dir, 'error.log')], {
    encoding: 'utf8',
  })
  expect(tested.stderr).toMatch(/test is successful/)
  expect(tested.status).toBe(0)

  nginxes.push(spawn(binary, ['-c', conf, '-p', dir, '-e', join(dir, 'error.log')], { stdio: 'ignore' }))
  const deadline = Date.now() + 15_000
  for (;;) {
    const answer = await get(listenPort, '/readyz').catch(() => undefined)
    if (answer?.status === 200) return listenPort
    if (Date.now() > deadline) throw new Error('nginx did not answer /readyz 200 within 15 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('the nginx snippet in docs/operations.md', () => {
  it('is accepted by nginx -t and keeps answering while an instance drains', {
    timeout: 180_000,
  }, async () => {
    const [first, second] = await Promise.all(
      ['first', 'second'].map((name) => startService({ name, args: ['--log-level', 'warn'] })),
    )
    services.push(first!, second!)
    const listenPort = await runSnippet(
      join(work, 'drain'),
      [first!, second!].map((service) => new URL(service.baseUrl).port) as [string, string],
    )

    // The first instance drains and exits; the proxy sends everything to the second.
    const draining = first!.stop()
    const answers = []
    for (let i = 0; i < 20; i++) answers.push(await get(listenPort, '/readyz'))
    expect(await draining).toBe(0)
    for (let i = 0; i < 20; i++) answers.push(await get(listenPort, '/livez'))
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
    expect(JSON.parse(answers.at(-1)!.body)).toEqual({ live: true })
  })

  it('believes only the X-Forwarded-For it appends: a client’s own Forwarded or X-Forwarded-For prefix does not pick its budget', {
    timeout: 180_000,
  }, async () => {
    // A production service (`start`) trusting nginx at 127.0.0.1, with a small per-address budget
    // on the auth proxy; the client reaches nginx from 127.0.0.2, an address of its own.
    const dir = join(work, 'forwarded')
    mkdirSync(dir, { recursive: true })
    const config = join(dir, 'latchkey.toml')
    writeFileSync(join(dir, 'master.key'), `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 })
    writeFileSync(
      config,
      [
        '[server]',
        'host = "127.0.0.1"',
        'port = 0',
        'trusted_proxies = ["127.0.0.1"]',
        '[storage]',
        `data_dir = "${join(dir, 'data')}"`,
        '[master_key]',
        'key_file = "master.key"',
        '[proxy]',
        'allowed_origins = ["https://app.example.com"]',
        'enabled_methods = ["passkey"]',
        '[rate_limits.per_client_address]',
        'per_second = 0.1',
        'burst = 3',
        '',
      ].join('\n'),
      { mode: 0o600 },
    )
    const init = await runCli(['init', '--config', config, '--root-public-key', testKey().publicKey])
    expect(init.code, init.stderr).toBe(0)
    const { authProxyConfigId } = JSON.parse(init.stdout) as { authProxyConfigId: string }
    const service = await startCli(['start', '--config', config, '--json'])
    const upstream = new URL(service.info.listening as string).port
    const listenPort = await runSnippet(join(dir, 'nginx'), [upstream, upstream])

    const call = (headers: Record<string, string>) =>
      send(listenPort, '/v1/wallet_kit_config', {
        method: 'POST',
        localAddress: '127.0.0.2',
        headers: {
          'Content-Type': 'application/json',
          Origin: 'https://app.example.com',
          'X-Auth-Proxy-Config-Id': authProxyConfigId,
          ...headers,
        },
        body: '{}',
      })
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) statuses.push((await call({ Forwarded: `for=10.9.${i}.1` })).status)
    for (let i = 3; i < 5; i++) statuses.push((await call({ 'X-Forwarded-For': `10.9.${i}.1` })).status)
    // The budget of 127.0.0.2 (burst 3) is spent whatever each request claimed to come from; one
    // from another address still passes.
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    const last = await call({ Forwarded: 'for=10.9.9.1' })
    expect(last.status).toBe(429)
    expect(JSON.parse(last.body).details).toMatchObject({
      errorCode: 'RATE_LIMITED',
      limit: 'perClientAddress',
    })
    const other = await send(listenPort, '/v1/wallet_kit_config', {
      method: 'POST',
      localAddress: '127.0.0.3',
      headers: {
        'Content-Type': 'application/json',
        Origin: 'https://app.example.com',
        'X-Auth-Proxy-Config-Id': authProxyConfigId,
      },
      body: '{}',
    })
    expect(other.status).toBe(200)
    expect(await service.stop()).toBe(0)
  })
})
