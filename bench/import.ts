/**
 * `npm run bench:import [-- --users N] [-- --large]`: N generated users (default 500; --large:
 * 100,000), each with an e-mail and a wallet given as a plaintext mnemonic in an owner-only file,
 * imported into PostgreSQL through the import path (`bulkImport`: the file read line by line, each
 * mnemonic HPKE-encrypted to the import key, one stamped `latchkey_import_user` per user, in one
 * transaction each) by a service in this process. Prints users per minute, the peak RSS and, beside
 * them, the raw rate of the service's own wallet derivation (BIP-39 seed + one BIP-32 account) on
 * one core. Starts and removes its own PostgreSQL (scripts/postgres.mjs). Asserts nothing.
 */

import { once } from 'node:events'
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { hexToBytes } from '@noble/hashes/utils.js'
import { createService } from '../packages/service/src/assembly/createService.ts'
import { bulkImport } from '../packages/service/src/importing/bulkImport.ts'
import { importClient } from '../packages/service/src/importing/importClient.ts'
import { deriveAccount, generateMnemonic, seedOf } from '../packages/service/src/kernel/crypto/index.ts'
import { openPostgres } from '../packages/service/src/kernel/store/durableStores.ts'
import { ETHEREUM_ACCOUNT } from '../packages/service/src/testing/harness.ts'
import { startPostgres } from '../scripts/postgres.mjs'

const { values } = parseArgs({
  options: { users: { type: 'string' }, large: { type: 'boolean' }, concurrency: { type: 'string' } },
})
const users = Number(values.users ?? (values.large ? 100_000 : 500))
const concurrency = Number(values.concurrency ?? 8)

const dir = mkdtempSync(join(tmpdir(), 'latchkey-bench-import-'))
const file = join(dir, 'users.jsonl')
const out = createWriteStream(file, { mode: 0o600 })
for (let i = 0; i < users; i++) {
  const line = {
    externalId: `bench-${i}`,
    email: `bench-${i}@example.com`,
    wallets: [{ walletName: 'Main', mnemonic: generateMnemonic(12), accounts: [ETHEREUM_ACCOUNT] }],
  }
  if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain')
}
await new Promise<void>((resolve) => out.end(resolve))
chmodSync(file, 0o600)

// The raw rate of the service's own derivation: what a wallet costs before any storage.
const rawCount = Math.min(users, 300)
const mnemonics = Array.from({ length: rawCount }, () => generateMnemonic(12))
const rawStarted = performance.now()
for (const mnemonic of mnemonics) deriveAccount(await seedOf(mnemonic), ETHEREUM_ACCOUNT)
const rawPerMinute = (rawCount * 60_000) / (performance.now() - rawStarted)

const postgres = await startPostgres()
const service = await createService({ store: await openPostgres(postgres.url) })
try {
  const client = importClient({
    url: 'http://bench.invalid',
    organizationId: service.dev.organizationId,
    privateKey: hexToBytes(service.dev.apiPrivateKey),
    fetch: (input, init) => service.fetch(input, init),
  })
  let peakRss = process.memoryUsage().rss
  const totals = await bulkImport({
    file,
    submit: (params) => client.importUser(params),
    importKey: () => client.importKey(),
    concurrency,
    progressEveryMs: 2000,
    onProgress: (p) => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss)
      process.stderr.write(`  ${p.imported + p.skipped}/${users} · ${Math.round(p.perMinute)}/min\n`)
    },
    onRejected: (r) => process.stderr.write(`  line ${r.line}: ${r.reason}\n`),
  })
  peakRss = Math.max(peakRss, process.resourceUsage().maxRSS * 1024)
  console.log(
    [
      `import: ${users} users with one wallet each into PostgreSQL, concurrency ${concurrency}`,
      `  imported ${totals.imported}, skipped ${totals.skipped}, rejected ${totals.rejected} in ${(totals.elapsedMs / 1000).toFixed(1)} s`,
      `  users per minute:               ${Math.round(totals.perMinute)}  (goal ≥ 2,400; Privy's published rate: 240)`,
      `  raw wallet derivation (1 core): ${Math.round(rawPerMinute)} per minute`,
      `  peak RSS:                       ${Math.round(peakRss / 1024 / 1024)} MiB`,
    ].join('\n'),
  )
} finally {
  await service.close()
  await postgres.stop()
  rmSync(dir, { recursive: true, force: true })
}
