import { type ChildProcess, spawn } from 'node:child_process'
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { ACTIVITIES } from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { afterEach, describe, expect, it } from 'vitest'
import { createService } from '../createService.ts'
import { signApiKeyStamp } from '../crypto/index.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf } from '../testing/harness.ts'
import { fileBackend, loadMasterKey } from './fileBackend.ts'

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-store-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const open = (dir: string, compactEvery?: number) =>
  createHarness({
    store: fileBackend(dir, compactEvery ? { compactEvery } : {}),
    masterKey: loadMasterKey(dir, undefined),
  })

describe('fileBackend', () => {
  it('keeps organizations, keys and wallets across restarts, with secrets sealed on disk', async () => {
    const dir = tempDir()
    const first = open(dir)
    const dev = first.service.dev
    const { walletId, addresses } = resultOf(
      'create_wallet',
      await first.submit('create_wallet', { walletName: 'Durable', accounts: [ETHEREUM_ACCOUNT] }),
    )
    first.service.close()
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600)
    const onDisk =
      readFileSync(join(dir, 'snapshot.json'), 'utf8') + readFileSync(join(dir, 'journal.ndjson'), 'utf8')
    expect(onDisk).toContain(walletId)
    expect(onDisk).not.toContain(dev.apiPrivateKey)
    const mnemonic = first.service.runtime.openText(
      first.service.store.get('wallets', walletId)!.sealedMnemonic,
    )
    expect(onDisk).not.toContain(mnemonic.split(' ').slice(0, 3).join(' '))

    const second = open(dir)
    expect(second.service.dev).toEqual(dev)
    const accounts = (await second.query('list_wallet_accounts', { walletId })).body.accounts
    expect(accounts.map((account: { address: string }) => account.address)).toEqual(addresses)
    second.service.close()
  })

  it('drops a torn final journal line but refuses a corrupt middle one', async () => {
    const dir = tempDir()
    const first = open(dir)
    resultOf('create_wallet', await first.submit('create_wallet', { walletName: 'A', accounts: [] }))
    first.service.close()
    appendFileSync(join(dir, 'journal.ndjson'), '[["wallets","x",{"id":"x"')
    const second = open(dir)
    expect(second.service.store.all('wallets').map((wallet) => wallet.name)).toEqual(['A'])
    second.service.close()
    appendFileSync(join(dir, 'journal.ndjson'), 'garbage\n[]\n')
    expect(() => open(dir)).toThrow(/line 1 is corrupt/)
  })

  it('folds the journal into a snapshot every compactEvery commits', async () => {
    const dir = tempDir()
    const h = open(dir, 3)
    for (let i = 0; i < 7; i++) {
      h.clock.advance(1)
      resultOf('create_wallet', await h.submit('create_wallet', { walletName: `W${i}`, accounts: [] }))
    }
    h.service.close()
    const journalLines = readFileSync(join(dir, 'journal.ndjson'), 'utf8').split('\n').filter(Boolean)
    expect(journalLines.length).toBeLessThan(3)
    const again = open(dir)
    expect(again.service.store.all('wallets')).toHaveLength(7)
    again.service.close()
  })

  it('refuses a data directory another live process holds, and takes over a dead one', () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'LOCK'), '1') // pid 1 is always alive
    expect(() =>
      createService({ store: fileBackend(dir), masterKey: loadMasterKey(dir, undefined) }),
    ).toThrow(/in use by process 1/)
    writeFileSync(join(dir, 'LOCK'), '999999999')
    const service = createService({ store: fileBackend(dir), masterKey: loadMasterKey(dir, undefined) })
    expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toBe(String(process.pid))
    service.close()
    expect(existsSync(join(dir, 'LOCK'))).toBe(false)
  })

  it('refuses to start with another master key', () => {
    const dir = tempDir()
    createService({ store: fileBackend(dir), masterKey: loadMasterKey(dir, undefined) }).close()
    expect(() => createService({ store: fileBackend(dir), masterKey: new Uint8Array(32).fill(7) })).toThrow(
      /wrong master key/,
    )
    expect(() => loadMasterKey(dir, 'not-hex')).toThrow(/64 hex/)
  })
})

describe('the CLI under kill -9', () => {
  const children: ChildProcess[] = []
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL')
  })

  const start = async (dir: string) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'packages/service/src/cli.ts', '--port', '0', '--json', '--data-dir', dir],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    children.push(child)
    const line = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! })
      lines.once('line', resolve)
      child.once('exit', (code) => reject(new Error(`CLI exited with ${code}`)))
    })
    return { child, info: JSON.parse(line) as Record<string, string> }
  }

  it('loses no acknowledged activity', async () => {
    const dir = tempDir()
    const { child, info } = await start(dir)
    expect(Object.keys(info).sort()).toEqual(
      [
        'apiPrivateKey',
        'apiPublicKey',
        'authProxyConfigId',
        'authProxyUrl',
        'baseUrl',
        'organizationId',
        'outboxUrl',
        'signerPublicKey',
        'trustedSignerPublicKey',
      ].sort(),
    )
    const post = async (base: string, path: string, body: object) => {
      const text = JSON.stringify(body)
      const stamp = signApiKeyStamp(text, {
        scheme: 'SIGNATURE_SCHEME_TK_API_P256',
        privateKey: hexToBytes(info.apiPrivateKey!),
      })
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        body: text,
        headers: { 'X-Stamp': stamp },
      })
      return { status: response.status, body: await response.json() }
    }
    const created = await post(info.baseUrl!, '/public/v1/submit/create_wallet', {
      type: ACTIVITIES.create_wallet.type,
      timestampMs: String(Date.now()),
      organizationId: info.organizationId,
      parameters: { walletName: 'Survivor', accounts: [ETHEREUM_ACCOUNT] },
    })
    expect(created.status).toBe(200)
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))

    const restarted = await start(dir)
    expect(restarted.info.organizationId).toBe(info.organizationId)
    expect(restarted.info.apiPrivateKey).toBe(info.apiPrivateKey)
    const wallets = await post(restarted.info.baseUrl!, '/public/v1/query/list_wallets', {
      organizationId: info.organizationId,
    })
    expect(wallets.body.wallets.map((wallet: { walletName: string }) => wallet.walletName)).toEqual([
      'Survivor',
    ])
  }, 60_000)

  it('explains bad flags', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'packages/service/src/cli.ts', '--port', 'abc'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    children.push(child)
    let stderr = ''
    child.stderr!.on('data', (chunk) => {
      stderr += chunk
    })
    const code = await new Promise((resolve) => child.once('exit', resolve))
    expect(code).toBe(2)
    expect(stderr).toMatch(/--port must be a number/)
  }, 30_000)
})
