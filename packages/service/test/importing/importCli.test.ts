// `latchkey-service import` as an operator runs it, against a running service on PostgreSQL:
// killed with -9 in the middle, then run again, every user is imported exactly once, with its
// wallet (no duplicate, no half user).

import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { english, generateMnemonic, mnemonicToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { openPostgres } from '../../src/kernel/store/durableStores.ts'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { type PostgresCluster, postgresArgs, startPostgres } from '../durability/postgres.ts'
import { cliCommand } from '../support/cliEntry.ts'
import { killAll, startService } from '../support/serviceProcess.ts'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-import-cli-'))
let cluster: PostgresCluster | undefined
afterAll(async () => {
  killAll()
  await cluster?.dispose()
  rmSync(dir, { recursive: true, force: true })
})

const USERS = 40
/** A P-256 public key of the right shape, for runs refused before anything is sent. */
const SOME_SIGNER = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), false))

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
  it('on PostgreSQL, killed with -9 in the middle and run again, imports every user exactly once with its wallet', async () => {
    cluster = await startPostgres()
    const masterKeyFile = join(dir, 'master.key')
    writeFileSync(masterKeyFile, `${bytesToHex(crypto.getRandomValues(new Uint8Array(32)))}\n`, {
      mode: 0o600,
    })
    const service = await startService({
      name: 'import target',
      args: postgresArgs(cluster.url, masterKeyFile),
    })
    const keyFile = join(dir, 'root.key')
    writeFileSync(keyFile, service.info.apiPrivateKey, { mode: 0o600 })
    const users = join(dir, 'users.jsonl')
    const mnemonics = Array.from({ length: USERS }, () => generateMnemonic(english))
    writeFileSync(
      users,
      mnemonics
        .map((mnemonic, i) =>
          JSON.stringify({
            externalId: `user-${i}`,
            email: `user-${i}@example.com`,
            userName: `User ${i}`,
            wallets: [{ walletName: 'Main', mnemonic, accounts: [ETHEREUM_ACCOUNT] }],
          }),
        )
        .join('\n'),
      { mode: 0o600 },
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
      '--trusted-signer-public-key',
      service.info.trustedSignerPublicKey,
      '--rate',
      '20',
      '--rejected',
      join(dir, 'rejected.jsonl'),
    ]
    // Killed while users are in flight: some imported, some sent and not yet answered.
    const killed = await runImport(args, (event) => event.event === 'progress' && Number(event.imported) > 0)
    expect(killed.signal).toBe('SIGKILL')
    const before = killed.events.at(-1)!
    expect(Number(before.imported)).toBeGreaterThan(0)
    expect(Number(before.imported)).toBeLessThan(USERS)

    const rerun = await runImport(args)
    expect(rerun.code, rerun.stderr).toBe(0)
    const done = rerun.events.at(-1)!
    expect(done).toMatchObject({ event: 'done', read: USERS, rejected: 0 })
    expect(Number(done.skipped)).toBeGreaterThanOrEqual(Number(before.imported))
    expect(Number(done.imported) + Number(done.skipped)).toBe(USERS)
    // The report file: made owner-only by the first run, appended to (nothing rejected) by the second.
    expect((statSync(join(dir, 'rejected.jsonl')).mode & 0o777).toString(8)).toBe('600')
    await service.stop()

    // What the database holds: one sub-organization per person, each with its one user, its
    // contact and its wallet at the mnemonic's address; nothing made twice, nothing half made.
    const store = await openPostgres(cluster.url)
    try {
      const imported = await store.findBy('importedUsers', 'organizationId', service.info.organizationId)
      expect(imported.map((row) => row.externalId).sort()).toEqual(
        mnemonics.map((_, i) => `user-${i}`).sort(),
      )
      const subOrganizations = await store.findBy(
        'organizations',
        'parentOrganizationId',
        service.info.organizationId,
      )
      expect(subOrganizations.map((row) => row.id).sort()).toEqual(
        imported.map((row) => row.subOrganizationId).sort(),
      )
      for (const row of imported) {
        const i = Number(row.externalId.replace('user-', ''))
        const members = await store.findBy('users', 'organizationId', row.subOrganizationId)
        expect(members.map((user) => user.userEmail)).toEqual([`user-${i}@example.com`])
        const wallets = await store.findBy('wallets', 'organizationId', row.subOrganizationId)
        expect(wallets.map((wallet) => wallet.id)).toEqual(row.walletIds)
        const accounts = await store.findBy('walletAccounts', 'organizationId', row.subOrganizationId)
        expect(accounts.map((account) => account.address)).toEqual([mnemonicToAccount(mnemonics[i]!).address])
      }
      expect(await store.all('wallets')).toHaveLength(USERS)
      // The activity records hold ciphertext only.
      const activities = JSON.stringify(await store.all('activities'))
      for (const mnemonic of mnemonics.slice(0, 5)) expect(activities).not.toContain(mnemonic)
    } finally {
      await store.close()
    }
  })

  // The report names the rejected users (their external ids and reasons): a file others can read,
  // or a symlink planted where it goes, is refused before anything is read or sent.
  it('refuses a --rejected file others can read, or a symlink, and writes nothing to it', async () => {
    const keyFile = join(dir, 'refusal.key')
    writeFileSync(keyFile, `${'11'.repeat(32)}\n`, { mode: 0o600 })
    const users = join(dir, 'refusal.jsonl')
    writeFileSync(users, `${JSON.stringify({ externalId: 'x', email: 'x@example.com' })}\n`, { mode: 0o600 })
    const args = (rejected: string) => [
      '--from',
      users,
      // Nothing listens here: a run that got past the check would fail on the network instead.
      '--url',
      'http://127.0.0.1:9',
      '--organization-id',
      'org',
      '--root-key-file',
      keyFile,
      '--trusted-signer-public-key',
      SOME_SIGNER,
      '--rejected',
      rejected,
    ]
    const shared = join(dir, 'shared-report.jsonl')
    writeFileSync(shared, 'earlier\n')
    chmodSync(shared, 0o644)
    const loose = await runImport(args(shared))
    expect(loose.code).not.toBe(0)
    expect(loose.stderr).toMatch(/--rejected .*mode 644/)
    expect(loose.events).toEqual([])
    expect(readFileSync(shared, 'utf8')).toBe('earlier\n')
    expect((statSync(shared).mode & 0o777).toString(8)).toBe('644')

    const target = join(dir, 'elsewhere.jsonl')
    writeFileSync(target, '', { mode: 0o600 })
    const link = join(dir, 'linked-report.jsonl')
    symlinkSync(target, link)
    const linked = await runImport(args(link))
    expect(linked.code).not.toBe(0)
    expect(linked.stderr).toMatch(/--rejected .*symlink/)
    expect(readFileSync(target, 'utf8')).toBe('')
  })

  // The import key says whom every plaintext mnemonic is encrypted to: the answer naming it must
  // not cross a network in clear, and must be checked against the service's signer key.
  it('refuses an http:// --url to another machine, and a run without --trusted-signer-public-key, before sending anything', async () => {
    const keyFile = join(dir, 'url.key')
    writeFileSync(keyFile, `${'11'.repeat(32)}\n`, { mode: 0o600 })
    const users = join(dir, 'url.jsonl')
    writeFileSync(users, `${JSON.stringify({ externalId: 'x', email: 'x@example.com' })}\n`, { mode: 0o600 })
    const base = ['--from', users, '--organization-id', 'org', '--root-key-file', keyFile]
    const remote = await runImport([
      ...base,
      '--url',
      'http://keys.example.com',
      '--trusted-signer-public-key',
      SOME_SIGNER,
    ])
    expect(remote.code).not.toBe(0)
    expect(remote.stderr).toMatch(/--url http:\/\/keys\.example\.com must be https:\/\//)
    expect(remote.events).toEqual([])
    const unsigned = await runImport([...base, '--url', 'https://keys.example.com'])
    expect(unsigned.code).not.toBe(0)
    expect(unsigned.stderr).toMatch(/pass --trusted-signer-public-key/)
    const malformed = await runImport([
      ...base,
      '--url',
      'https://keys.example.com',
      '--trusted-signer-public-key',
      '04abcd',
    ])
    expect(malformed.code).not.toBe(0)
    expect(malformed.stderr).toMatch(/--trusted-signer-public-key must be/)
  })
})
