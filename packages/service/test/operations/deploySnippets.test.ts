// The systemd unit and the nginx snippet of docs/operations.md, as an operator would paste them:
// `systemd-analyze verify` must accept the unit without a warning, and nginx (Debian's
// nginx-light, installed when missing) must accept the snippet and then serve through it: two
// services behind it, one stopped with SIGTERM (its drain), and every request still answered 200
// by the other. Only the addresses, ports and certificate paths are replaced, each replacement
// checked, so an edit to the docs that the test cannot follow fails here instead of passing.

import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { aptInstall } from '../../../../scripts/apt.mjs'
import { freePort } from '../../../../scripts/postgres.mjs'
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
let nginx: ReturnType<typeof spawn> | undefined

afterAll(async () => {
  nginx?.kill('SIGQUIT')
  killAll()
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

/** GET `path` through nginx over TLS (its certificate is our self-signed one). */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        rejectUnauthorized: false,
        servername: 'wallet.example.com',
        timeout: 10_000,
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.on('timeout', () => req.destroy(new Error(`GET ${path} through nginx timed out`)))
    req.on('error', reject)
    req.end()
  })
}

describe('the nginx snippet in docs/operations.md', () => {
  it('is accepted by nginx -t and keeps answering while an instance drains', {
    timeout: 180_000,
  }, async () => {
    const binary = ensureNginx()
    const [first, second] = await Promise.all(
      ['first', 'second'].map((name) => startService({ name, args: ['--log-level', 'warn'] })),
    )
    services.push(first!, second!)
    const listenPort = await freePort()

    chmodSync(work, 0o755)
    const cert = join(work, 'wallet.pem')
    const key = join(work, 'wallet.key')
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
    const upstreams = [first!, second!].map((service) => new URL(service.baseUrl).port)
    snippet = replaceChecked(snippet, /server 10\.0\.0\.11:8787/, `server 127.0.0.1:${upstreams[0]}`)
    snippet = replaceChecked(snippet, /server 10\.0\.0\.12:8787/, `server 127.0.0.1:${upstreams[1]}`)
    snippet = replaceChecked(snippet, /listen 443 ssl;/, `listen 127.0.0.1:${listenPort} ssl;`)
    snippet = replaceChecked(snippet, /\/etc\/ssl\/wallet\.example\.com\.pem/, cert)
    snippet = replaceChecked(snippet, /\/etc\/ssl\/wallet\.example\.com\.key/, key)
    const temp = (name: string) => `${name}_temp_path ${join(work, name)};`
    const conf = join(work, 'nginx.conf')
    writeFileSync(
      conf,
      [
        'daemon off;',
        'worker_processes 1;',
        `pid ${join(work, 'nginx.pid')};`,
        `error_log ${join(work, 'error.log')} warn;`,
        'events { worker_connections 64; }',
        'http {',
        '  access_log off;',
        `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
        snippet,
        '}',
        '',
      ].join('\n'),
    )

    const tested = spawnSync(binary, ['-t', '-c', conf, '-p', work, '-e', join(work, 'error.log')], {
      encoding: 'utf8',
    })
    expect(tested.stderr).toMatch(/test is successful/)
    expect(tested.status).toBe(0)

    nginx = spawn(binary, ['-c', conf, '-p', work, '-e', join(work, 'error.log')], { stdio: 'ignore' })
    const deadline = Date.now() + 15_000
    for (;;) {
      const answer = await get(listenPort, '/readyz').catch(() => undefined)
      if (answer?.status === 200) break
      if (Date.now() > deadline) throw new Error('nginx did not answer /readyz 200 within 15 s')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }

    // The first instance drains and exits; the proxy sends everything to the second.
    const draining = first!.stop()
    const answers = []
    for (let i = 0; i < 20; i++) answers.push(await get(listenPort, '/readyz'))
    expect(await draining).toBe(0)
    for (let i = 0; i < 20; i++) answers.push(await get(listenPort, '/livez'))
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
    expect(JSON.parse(answers.at(-1)!.body)).toEqual({ live: true })
  })
})
