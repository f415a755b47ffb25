// `latchkey-service import` as an operator runs it, against a running service: killed with -9 in
// the middle, then run again, every user is imported exactly once.

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { hexToBytes } from '@noble/hashes/utils.js'
import { afterAll, describe, expect, it } from 'vitest'
import { importClient } from '../../src/importing/importClient.ts'
import { cliCommand } from '../support/cliEntry.ts'
import { killAll, startService } from '../support/serviceProcess.ts'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-import-cli-'))
afterAll(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

const USERS = 40

/** Runs the import CLI; `killWhen` sees each JSON line on stdout and may kill -9 the process. */
function runImport(args: string[], killWhen?: (event: Record<string, unknown>) => boolean) {
  const child = spawn(process.execPath, [...cliCommand(), 'import', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const events: Record<string, unknown>[] = []
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line) as Record<string, unknown>
    events.push(event)
    if (killWhen?.(event)) child.kill('SIGKILL')
  })
  return new Promise<{
    code: number | null
    signal: NodeJS.Signals | null
    events: typeof events
    stderr: string
  }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, events, stderr })))
}

describe('latchkey-service import', { timeout: 120_000 }, () => {
  it('killed with -9 in the middle and run again, imports every user exactly once', async () => {
    const service = await startService({ name: 'import target' })
    const keyFile = join(dir, 'root.key')
    writeFileSync(keyFile, service.info.apiPrivateKey, { mode: 0o600 })
    const users = join(dir, 'users.jsonl')
    writeFileSync(
      users,
      Array.from({ length: USERS }, (_, i) =>
        JSON.stringify({ externalId: `user-${i}`, email: `user-${i}@example.com`, userName: `User ${i}` }),
      ).join('\n'),
    )
    const args = [
      '--from',
      users,
      '--url',
      service.baseUrl,
      '--organization-id',
      service.info.organizationId,
      '--root-key-file',
      keyFile,
      '--rate',
      '20',
    ]
    const killed = await runImport(args, (event) => event.event === 'progress' && Number(event.imported) > 0)
    expect(killed.signal).toBe('SIGKILL')
    const before = killed.events.at(-1)!
    expect(Number(before.imported)).toBeGreaterThan(0)

    const rerun = await runImport(args)
    expect(rerun.code, rerun.stderr).toBe(0)
    const done = rerun.events.at(-1)!
    expect(done).toMatchObject({ event: 'done', read: USERS, rejected: 0 })
    expect(Number(done.skipped)).toBeGreaterThanOrEqual(Number(before.imported))
    expect(Number(done.imported) + Number(done.skipped)).toBe(USERS)

    const client = importClient({
      url: service.baseUrl,
      organizationId: service.info.organizationId,
      privateKey: hexToBytes(service.info.apiPrivateKey),
    })
    const listed = await client.call('/public/v1/query/list_suborgs', {
      organizationId: service.info.organizationId,
      paginationOptions: { limit: '100' },
    })
    expect((listed.body as { organizationIds: string[] }).organizationIds).toHaveLength(USERS)
    await service.stop()
  })
})
