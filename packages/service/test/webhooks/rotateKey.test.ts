// `latchkey-service webhooks rotate-key` (the bundled CLI) on a data dir: the new key signs from
// then on, the old one stays at the JWKS endpoint for --overlap-hours, so a receiver accepts
// deliveries signed with either during the overlap (one signed just before the rotation, one
// after), and only the new key once the overlap is over.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyWebhook, WEBHOOK_JWKS_PATH } from '@latchkey/protocol'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { loadMasterKey, openDataDir } from '../../src/kernel/store/durableStores.ts'
import {
  createHarness,
  type FakeClock,
  fakeClock,
  type Harness,
  resultOf,
} from '../../src/testing/harness.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'
import { killAll, runCli } from '../production/cli.ts'

const dirs: string[] = []
let server: Server | undefined
const captured: { headers: IncomingHttpHeaders; body: Buffer }[] = []
afterEach(killAll)
afterAll(async () => {
  await new Promise((done) => (server ? server.close(done) : done(undefined)))
  for (const dir of dirs) removeDir(dir)
})

async function open(dir: string, clock: FakeClock): Promise<Harness> {
  return createHarness({
    store: await openDataDir(dir),
    masterKey: loadMasterKey(dir, undefined),
    clock,
    webhooks: { transport: nodeWebhookTransport() },
    jobs: { pollMs: 3_600_000 },
  })
}

const flush = async (h: Harness) => {
  for (let round = 0; round < 10; round++) {
    await h.service.runtime.jobs.idle()
    if ((await h.service.runtime.jobs.runDue()) === 0) return
  }
}

describe('webhooks rotate-key', () => {
  it('adds a key that signs from then on; the old one stays published for the overlap, then leaves', {
    timeout: 120_000,
  }, async () => {
    server = createServer(async (request, response) => {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      captured.push({ headers: request.headers, body: Buffer.concat(chunks) })
      response.writeHead(204).end()
    })
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done))
    const dir = tempDir('webhooks-rotate')
    dirs.push(dir)
    const clock = fakeClock(Date.now())
    let h = await open(dir, clock)
    resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        name: 'app',
        subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
      }),
    )
    h.clock.advance(1)
    await h.submit('create_wallet', { walletName: 'before', accounts: [] })
    await flush(h)
    const [before] = captured
    const oldKid = before!.headers['x-turnkey-signature-key-id']
    await h.service.close()

    const rotated = await runCli(['webhooks', 'rotate-key', '--data-dir', dir, '--overlap-hours', '2'], {
      LATCHKEY_MASTER_KEY: undefined,
    })
    expect(rotated.code, rotated.stderr).toBe(0)
    const newKid = rotated.stdout.split('\n')[0]!
    expect(newKid).toMatch(/^whk_/)
    expect(newKid).not.toBe(oldKid)

    h = await open(dir, clock)
    try {
      h.clock.advance(1)
      await h.submit('create_wallet', { walletName: 'after', accounts: [] })
      await flush(h)
      const after = captured[1]!
      expect(after.headers['x-turnkey-signature-key-id']).toBe(newKid)
      // During the overlap a receiver fetching the JWKS accepts both.
      const jwks = await (await h.service.app.request(WEBHOOK_JWKS_PATH)).json()
      expect(jwks.keys.map((key: { kid: string }) => key.kid)).toEqual([newKid, oldKid])
      for (const delivery of [before!, after])
        expect(
          verifyWebhook({ ...delivery, jwks, now: Number(delivery.headers['x-turnkey-timestamp']) }),
        ).toMatchObject({ ok: true })
      // After the overlap, only the new key is published: the old signature no longer verifies.
      h.clock.advance(2 * 3_600_000 + 60_000)
      const later = await (await h.service.app.request(WEBHOOK_JWKS_PATH)).json()
      expect(later.keys.map((key: { kid: string }) => key.kid)).toEqual([newKid])
      expect(
        verifyWebhook({ ...before!, jwks: later, now: Number(before!.headers['x-turnkey-timestamp']) }),
      ).toMatchObject({ ok: false, reason: 'unknown_key' })
    } finally {
      await h.service.close()
    }
  })

  it('refuses bad flags with a message naming them', async () => {
    const bad = await runCli([
      'webhooks',
      'rotate-key',
      '--data-dir',
      '/nonexistent',
      '--overlap-hours',
      '-1',
    ])
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain('--overlap-hours')
    const unknown = await runCli(['webhooks', 'rotate'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain('unknown subcommand rotate')
  })
})
