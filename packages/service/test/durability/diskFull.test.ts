// A full disk on SQLite: the service runs with a file-size limit (`ulimit -S -f`, so every
// file it writes stops growing at the limit and the write fails with EFBIG, as on a full file
// system; Node ignores SIGXFSZ). Writes past it must answer 503 STORAGE_UNAVAILABLE (never 500,
// never a 200 that is then lost), reads keep working, and once space is back the service writes
// again: the same process when the limit is lifted (prlimit), and after a restart.
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, SOLANA_ACCOUNT } from '../../src/testing/testKeys.ts'
import { type Reply, RootClient, resultOf } from '../support/RootClient.ts'
import { killAll, raiseFileSizeLimit, type ServiceProcess, startService } from '../support/serviceProcess.ts'
import { removeDir, tempDir } from './tempDir.ts'

afterEach(killAll)

/** Room left above the largest file of the data dir after bootstrap. */
const HEADROOM_KIB = 256
const ACCOUNTS = [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT]

const isStorageUnavailable = (reply: Reply) =>
  reply.status === 503 && reply.body?.details?.errorCode === 'STORAGE_UNAVAILABLE'

interface Fill {
  /** Wallet name → activity id and result of every 200. */
  acknowledged: Map<string, { activityId: string; walletId: string }>
  /** Wallet names answered 503 STORAGE_UNAVAILABLE. */
  refused: string[]
  /** Any other answer (a failure of the test), described. */
  other: string[]
  /** Every wallet name answered anything but 200: none of them may be stored. */
  notAcknowledged: string[]
}

/** create_wallet until five in a row fail (at most 400 requests or 40 s). */
async function fillUp(client: RootClient, service: ServiceProcess, tag: string): Promise<Fill> {
  const fill: Fill = { acknowledged: new Map(), refused: [], other: [], notAcknowledged: [] }
  const deadline = Date.now() + 40_000
  let failedInARow = 0
  for (let n = 0; n < 400 && failedInARow < 5 && Date.now() < deadline; n++) {
    const walletName = `${tag}-${n}`
    const reply = await client.submit(service, 'create_wallet', { walletName, accounts: ACCOUNTS })
    if (reply.status === 200) {
      failedInARow = 0
      fill.acknowledged.set(walletName, {
        activityId: reply.body.activity.id,
        walletId: reply.body.activity.result.createWalletResult.walletId,
      })
    } else if (isStorageUnavailable(reply)) {
      failedInARow++
      fill.refused.push(walletName)
      fill.notAcknowledged.push(walletName)
    } else {
      fill.notAcknowledged.push(walletName)
      failedInARow++
      fill.other.push(`${walletName}: ${reply.status} ${JSON.stringify(reply.body)}`)
    }
  }
  return fill
}

/** A data dir bootstrapped without a limit, holding one wallet; and the limit for the next start. */
async function bootstrap(dir: string) {
  const service = await startService({ args: ['--data-dir', dir] })
  const client = new RootClient(service.info)
  const first = await client.submit(service, 'create_wallet', {
    walletName: 'before the limit',
    accounts: ACCOUNTS,
  })
  resultOf('create_wallet', first)
  expect(await service.stop()).toBe(0)
  const largest = Math.max(...readdirSync(dir).map((name) => statSync(join(dir, name)).size))
  return {
    client,
    firstActivityId: first.body.activity.id as string,
    limitKiB: Math.ceil(largest / 1024) + HEADROOM_KIB,
  }
}

/** Every acknowledged wallet and activity is there; no refused one is. */
async function expectAllAcknowledged(
  client: RootClient,
  service: ServiceProcess,
  fill: Fill,
  firstActivityId: string,
) {
  for (const activityId of [firstActivityId, ...[...fill.acknowledged.values()].map((a) => a.activityId)]) {
    const reply = await client.query(service, 'get_activity', { activityId })
    expect(reply.status, `get_activity ${activityId}: ${JSON.stringify(reply.body)}`).toBe(200)
    expect(reply.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  }
  const wallets = await client.query(service, 'list_wallets')
  expect(wallets.status).toBe(200)
  const listed = new Map<string, string>(
    wallets.body.wallets.map((w: { walletName: string; walletId: string }) => [w.walletName, w.walletId]),
  )
  for (const [name, { walletId }] of fill.acknowledged)
    expect(listed.get(name), `${name} lost`).toBe(walletId)
  expect(
    fill.notAcknowledged.filter((name) => listed.has(name)),
    'wallets answered other than 200 but stored',
  ).toEqual([])
  return listed
}

/** While full: /health, get_activity and list_wallets answer. */
async function expectReadsServed(
  service: ServiceProcess,
  client: RootClient,
  fill: Fill,
  firstActivityId: string,
) {
  const health = await fetch(`${service.info.baseUrl}/health`)
  expect(health.status).toBe(200)
  await expectAllAcknowledged(client, service, fill, firstActivityId)
}

/**
 * Writes failed (hard), and only with 503 STORAGE_UNAVAILABLE (soft: the test goes on to check
 * reads and what survives, so one run reports every broken promise).
 */
function expectFull(fill: Fill, service: ServiceProcess) {
  expect(fill.acknowledged.size, 'the limit left no room for a single write').toBeGreaterThan(0)
  expect(
    fill.refused.length + fill.other.length,
    'writes never failed: the limit was not reached',
  ).toBeGreaterThanOrEqual(5)
  expect
    .soft(
      fill.other,
      `answers other than 200 and 503 STORAGE_UNAVAILABLE; the service's stderr:\n${service.stderr().slice(0, 4000)}`,
    )
    .toEqual([])
}

describe('SQLite on a full disk (file-size limit)', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) removeDir(dir)
  })

  /**
   * A data dir holding one wallet, a service on it under a file-size limit, and create_wallet
   * until that service's writes fail; checked full, with its reads still served.
   */
  async function fullDataDir(prefix: string) {
    const dir = tempDir(prefix)
    dirs.push(dir)
    const { client, firstActivityId, limitKiB } = await bootstrap(dir)
    const limited = await startService({ args: ['--data-dir', dir], fileSizeLimitKiB: limitKiB })
    const fill = await fillUp(client, limited, 'full')
    expectFull(fill, limited)
    await expectReadsServed(limited, client, fill, firstActivityId)
    return { dir, client, firstActivityId, limited, fill }
  }

  it('answers 503 STORAGE_UNAVAILABLE, serves reads, and the same process writes again once space is back', async () => {
    const { dir, client, firstActivityId, limited, fill } = await fullDataDir('disk-full')

    // Space is back for the same process: it writes again by itself, no restart.
    await raiseFileSizeLimit(limited.pid)
    let recovered: Reply | undefined
    for (let attempt = 0; attempt < 10; attempt++) {
      const walletName = `after space is back ${attempt}`
      recovered = await client.submit(limited, 'create_wallet', { walletName, accounts: ACCOUNTS })
      if (recovered.status === 200) {
        fill.acknowledged.set(walletName, {
          activityId: recovered.body.activity.id,
          walletId: recovered.body.activity.result.createWalletResult.walletId,
        })
        break
      }
      expect.soft(isStorageUnavailable(recovered), JSON.stringify(recovered.body)).toBe(true)
      fill.notAcknowledged.push(walletName)
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
    expect(recovered?.status, JSON.stringify(recovered?.body)).toBe(200)
    for (let n = 0; n < 3; n++) {
      const walletName = `more after space is back ${n}`
      const reply = await client.submit(limited, 'create_wallet', { walletName, accounts: ACCOUNTS })
      fill.acknowledged.set(walletName, {
        activityId: reply.body.activity?.id,
        walletId: resultOf('create_wallet', reply).walletId,
      })
    }
    expect(await limited.stop(), limited.stderr()).toBe(0)

    // A clean restart (no limit) holds everything acknowledged and nothing refused.
    const restarted = await startService({ args: ['--data-dir', dir] })
    await expectAllAcknowledged(client, restarted, fill, firstActivityId)
    resultOf(
      'create_wallet',
      await client.submit(restarted, 'create_wallet', { walletName: 'restarted', accounts: ACCOUNTS }),
    )
    expect(await restarted.stop(), restarted.stderr()).toBe(0)
  }, 120_000)

  it('loses nothing acknowledged to kill -9 at a full disk; a restart with space writes and restarts cleanly', async () => {
    const { dir, client, firstActivityId, limited, fill } = await fullDataDir('disk-full-crash')
    await limited.crash()

    const restarted = await startService({ args: ['--data-dir', dir] })
    await expectAllAcknowledged(client, restarted, fill, firstActivityId)
    const after = resultOf(
      'create_wallet',
      await client.submit(restarted, 'create_wallet', { walletName: 'space is back', accounts: ACCOUNTS }),
    )
    expect(await restarted.stop(), restarted.stderr()).toBe(0)

    const again = await startService({ args: ['--data-dir', dir] })
    const listed = await expectAllAcknowledged(client, again, fill, firstActivityId)
    expect(listed.get('space is back')).toBe(after.walletId)
    expect(await again.stop(), again.stderr()).toBe(0)
  }, 120_000)
})
