// The production commands as an operator runs them: `config check`, `init` (twice), `start`, and
// a client signing with the root key the test made (the service never sees its private key).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bytesToHex } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, testKey } from '../../src/testing/testKeys.ts'
import { RootClient, resultOf } from '../support/RootClient.ts'
import type { DevInfo } from '../support/serviceProcess.ts'
import { killAll, runCli, startCli } from './cli.ts'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-production-'))
const MASTER_KEY = bytesToHex(crypto.getRandomValues(new Uint8Array(32)))
const root = testKey()
const ROOT_PRIVATE_KEY = bytesToHex(root.privateKey)
const APP = 'https://app.example.com'
const BROKEN = fileURLToPath(new URL('./fixtures/broken/', import.meta.url))

function write(name: string, text: string, mode = 0o600): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  chmodSync(path, mode)
  return path
}

let config: string
let unsafe: string
beforeAll(() => {
  write('master.key', `${MASTER_KEY}\n`)
  config = write(
    'latchkey.toml',
    `[server]
host = "127.0.0.1"
port = 0
trusted_proxies = ["127.0.0.1"]

[storage]
data_dir = "${join(dir, 'data')}"

[master_key]
key_file = "master.key"

[observability]
admin_port = 0

[proxy]
allowed_origins = ["${APP}"]
app_name = "Example"
enabled_methods = ["passkey"]
`,
    0o644,
  )
  unsafe = write('unsafe.toml', `[proxy]\nallowed_origins = ["*"]\nenabled_methods = ["email", "google"]\n`)
})

afterAll(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

/** Nothing the service printed may hold a secret the test knows. */
function expectNoSecrets(text: string): void {
  expect(text).not.toContain(MASTER_KEY)
  expect(text).not.toContain(ROOT_PRIVATE_KEY)
}

describe('latchkey-service in production', { timeout: 300_000 }, () => {
  it('config check prints the effective configuration redacted, and names every bad key with exit code 2', async () => {
    const [good, broken, refused, dev] = await Promise.all([
      runCli(['config', 'check', '--config', config]),
      runCli(['config', 'check', '--config', join(BROKEN, 'wrongTypePort.toml')]),
      runCli(['start', '--config', unsafe], {
        LATCHKEY_MASTER_KEY: undefined,
        LATCHKEY_DATABASE_URL: undefined,
      }),
      runCli(['dev', '--host', '0.0.0.0']),
    ])
    expect(good.code, good.stderr).toBe(0)
    expect(good.stdout).toContain('key = "<redacted>"')
    expect(good.stdout).toContain(`allowed_origins = [ "${APP}" ]`)
    expectNoSecrets(good.stdout + good.stderr)

    expect(broken.code).toBe(2)
    expect(broken.stderr).toMatch(
      /wrongTypePort\.toml: server\.port: must be a whole number from 0 to 65535, got "eighty"/,
    )
    expect(broken.stderr).not.toMatch(/\n\s+at /)

    expect(refused.code).toBe(2)
    for (const key of [
      'storage:',
      'master_key.key:',
      'proxy.allowed_origins: "*"',
      'proxy.enabled_methods: google',
      'proxy.enabled_methods: email needs an SMTP server',
    ])
      expect(refused.stderr).toContain(key)
    expect(refused.stdout).toBe('')

    expect(dev.code).toBe(2)
    expect(dev.stderr).toMatch(/--host 0\.0\.0\.0: dev serves this machine only/)
  })

  it('start refuses to run before init; init makes the organization once; start serves it to the root key', async () => {
    const early = await runCli(['start', '--config', config])
    // Once (2026-12-03, CI) it ended by a signal within 2.5 s instead: say which, and what it wrote.
    expect(early.code, `signal ${early.signal}, stdout ${early.stdout}, stderr ${early.stderr}`).toBe(2)
    expect(early.stderr).toMatch(/no parent organization in .*data \(SQLite\): run `latchkey-service init/)

    const first = await runCli(['init', '--config', config, '--root-public-key', root.publicKey])
    expect(first.code, first.stderr).toBe(0)
    const ids = JSON.parse(first.stdout)
    expect(ids).toEqual({
      organizationId: expect.any(String),
      rootUserId: expect.any(String),
      rootApiKeyId: expect.any(String),
      authProxyConfigId: expect.any(String),
      trustedSignerPublicKey: expect.stringMatching(/^04[0-9a-f]{128}$/),
    })
    const second = await runCli(['init', '--config', config, '--root-public-key', root.publicKey])
    expect(second.code, second.stderr).toBe(0)
    expect(JSON.parse(second.stdout)).toEqual(ids)
    const other = await runCli(['init', '--config', config, '--root-public-key', testKey().publicKey])
    expect(other.code).toBe(2)
    expect(other.stderr).toMatch(/--root-public-key: .* was made with another root key/)

    const service = await startCli(['start', '--config', config, '--json'])
    try {
      expect(service.info).toMatchObject({
        organizationId: ids.organizationId,
        authProxyConfigId: ids.authProxyConfigId,
        trustedSignerPublicKey: ids.trustedSignerPublicKey,
        // No [rpc] node: nothing to broadcast.
        sendWorker: false,
      })
      const target = { baseUrl: service.info.listening as string }
      const client = new RootClient({
        baseUrl: target.baseUrl,
        organizationId: ids.organizationId,
        apiPrivateKey: ROOT_PRIVATE_KEY,
      } as DevInfo)
      const whoami = await client.query(target, 'whoami')
      expect(whoami.status).toBe(200)
      expect(whoami.body).toMatchObject({ organizationId: ids.organizationId, userId: ids.rootUserId })
      const wallet = resultOf(
        'create_wallet',
        await client.submit(target, 'create_wallet', {
          walletName: 'treasury',
          accounts: [ETHEREUM_ACCOUNT],
        }),
      )
      expect(wallet.addresses[0]).toMatch(/^0x[0-9a-fA-F]{40}$/)
      const stranger = new RootClient({ ...client.info, apiPrivateKey: bytesToHex(testKey().privateKey) })
      expect((await stranger.query(target, 'whoami')).status).toBe(401)

      for (const path of [
        '/dev/outbox.json',
        '/dev/outbox',
        '/dev/oidc/google/.well-known/openid-configuration',
      ]) {
        const reply = await fetch(`${target.baseUrl}${path}`)
        expect(reply.status, path).toBe(404)
      }
      // The admin listener's /readyz tells the operator about sends; the public one does not.
      const admin = service.info.adminUrl as string
      const ready = (await (await fetch(`${admin}/readyz`)).json()) as { sends: unknown }
      expect(ready.sends).toEqual({
        worker: false,
        checkedAt: expect.any(Number),
        open: expect.arrayContaining([{ chain: 'eip155', status: 'PENDING', count: 0, oldestSeconds: 0 }]),
      })
      expect(await (await fetch(`${target.baseUrl}/readyz`)).json()).not.toHaveProperty('sends')
      expect(await (await fetch(`${admin}/metrics`)).text()).toContain(
        'latchkey_sends_open{chain="eip155",status="PENDING"} 0',
      )
      const signer = await fetch(`${target.baseUrl}/public/v1/signer`)
      expect(signer.headers.get('x-content-type-options')).toBe('nosniff')
      expect(signer.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    } finally {
      expect(await service.stop()).toBe(0)
    }
    const output = service.output()
    expectNoSecrets(
      output.stdout + output.stderr + first.stdout + first.stderr + second.stdout + second.stderr,
    )
  })
})
