// `latchkey-service import --url` is https://, or http:// to this machine only: localhost,
// 127.0.0.0/8 or [::1]. Not a name under `.localhost` (which browsers keep on this machine): Node
// asks the system resolver for it, and where that resolver asks DNS ("files dns", no
// systemd-resolved), whoever answers DNS would get the whole import in clear (every person's
// contacts, OAuth subjects and passkeys, the root key's stamped requests) and answer what the
// command trusts.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cliCommand } from '../support/cliEntry.ts'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-import-url-'))

/** Every request that reached the stand-in service, by host and path. */
const received: { host: string; path: string }[] = []
const servers: Server[] = []

/** A stand-in service on `address`: records each request and refuses it (400), so each line is rejected. */
async function listen(address: string): Promise<number> {
  const server = createServer((request, response) => {
    received.push({ host: String(request.headers.host), path: String(request.url) })
    request.resume()
    request.on('end', () => {
      response.writeHead(400, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify({ message: 'refused by the stand-in' }))
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, address, resolve))
  return (server.address() as AddressInfo).port
}

let v4Port = 0
let v6Port = 0
beforeAll(async () => {
  v4Port = await listen('127.0.0.1')
  v6Port = await listen('::1')
})
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  rmSync(dir, { recursive: true, force: true })
})

/** Runs the import CLI with `--url url` over one user without secrets: its exit code, stderr and stdout events. */
function runImport(url: string) {
  const users = join(dir, 'users.jsonl')
  writeFileSync(users, `${JSON.stringify({ externalId: 'x', email: 'x@example.com' })}\n`, { mode: 0o600 })
  const keyFile = join(dir, 'root.key')
  writeFileSync(keyFile, `${bytesToHex(p256.utils.randomSecretKey())}\n`, { mode: 0o600 })
  const args = [
    'import',
    '--from',
    users,
    '--url',
    url,
    '--organization-id',
    'org',
    '--root-key-file',
    keyFile,
    '--trusted-signer-public-key',
    bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), false)),
  ]
  const child = spawn(process.execPath, [...cliCommand(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  return new Promise<{ code: number | null; stderr: string; events: Record<string, unknown>[] }>((resolve) =>
    child.once('close', (code) =>
      resolve({
        code,
        stderr,
        events: stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      }),
    ),
  )
}

describe('latchkey-service import --url over http://', { timeout: 60_000 }, () => {
  it('refuses a name under .localhost, whose address DNS may decide, before anything is sent', async () => {
    for (const url of [`http://import.localhost:${v4Port}`, `http://localhost.:${v4Port}`]) {
      const before = received.length
      const run = await runImport(url)
      expect(run.code).not.toBe(0)
      expect(run.stderr).toContain(`--url ${url} must be https://`)
      expect(run.stderr).toMatch(/not a name under \.localhost/)
      expect(run.events).toEqual([])
      expect(received.length).toBe(before)
    }
  })

  it('takes localhost, 127.0.0.0/8 and [::1], and reaches the service there', async () => {
    for (const url of [`http://localhost:${v4Port}`, `http://127.1:${v4Port}`, `http://[::1]:${v6Port}`]) {
      const before = received.length
      const run = await runImport(url)
      // The stand-in refuses the one line: the run got past --url and reached it.
      expect(run.stderr).not.toMatch(/--url/)
      expect(run.code).toBe(2)
      expect(received.length).toBeGreaterThan(before)
      expect(received.slice(before).map((r) => r.path)).toContain('/public/v1/submit/latchkey_import_user')
    }
  })
})
