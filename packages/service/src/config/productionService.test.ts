// `start`'s service takes each section of the file: here `[sending]`, which nothing else reads.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SENDING } from '../sending/sendingState.ts'
import { loadConfig } from './loadConfig.ts'
import { productionService } from './productionService.ts'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-production-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('productionService', () => {
  it('runs the send worker as [sending] says', async () => {
    const file = join(dir, 'latchkey.toml')
    writeFileSync(
      file,
      `[server]
public_url = "https://wallet.example.com"

[storage]
data_dir = "${join(dir, 'data')}"

[proxy]
allowed_origins = ["https://app.example.com"]
enabled_methods = ["passkey"]

[sending]
worker = false
rpc_timeout_ms = 2000
max_replacements = 1
`,
      { mode: 0o600 },
    )
    const { config } = loadConfig({ file, env: { LATCHKEY_MASTER_KEY: 'a1'.repeat(32) } })
    const service = await productionService(config)
    try {
      expect(service.runtime.stateOf(SENDING).sending).toEqual({
        worker: false,
        pollIntervalMs: 250,
        rpcTimeoutMs: 2000,
        replaceAfterMs: 60_000,
        replacementBumpPercent: 25,
        maxReplacements: 1,
        maxFeePerGasCeiling: '500000000000',
      })
    } finally {
      await service.close()
    }
  })
})
