// kill -9 during a burst of concurrent writes, on SQLite (--data-dir) and PostgreSQL:
// after a restart on the same data every activity answered 200 is there, COMPLETED with the same
// result, and nothing is half-applied.
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { RootClient } from '../support/RootClient.ts'
import { killAll, startService } from '../support/serviceProcess.ts'
import { burstThenCrash, checkAfterRestart } from './burst.ts'
import { type PostgresCluster, postgresArgs, startPostgres } from './postgres.ts'
import { removeDir, tempDir } from './tempDir.ts'

afterEach(killAll)

describe('kill -9 during concurrent writes', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) removeDir(dir)
  })

  /** Starts on `args`, bursts, kills -9, restarts on the same `args` and checks what survived. */
  async function crashAndRestart(args: string[]) {
    const first = await startService({ args })
    const client = new RootClient(first.info)
    const burst = await burstThenCrash(first, client)

    const second = await startService({ args })
    expect(second.info.organizationId).toBe(first.info.organizationId)
    expect(second.info.apiPrivateKey).toBe(first.info.apiPrivateKey)
    await checkAfterRestart(client, second, burst, first)
    expect(await second.stop()).toBe(0)
  }

  it('SQLite (--data-dir): every 200 survives, nothing half-applied', async () => {
    const dir = tempDir('crash-sqlite')
    dirs.push(dir)
    await crashAndRestart(['--data-dir', dir])
  }, 60_000)

  describe('PostgreSQL', () => {
    let postgres: PostgresCluster | undefined
    beforeAll(async () => {
      postgres = await startPostgres()
    }, 600_000)
    afterAll(async () => {
      await postgres?.dispose()
    })

    it('every 200 survives, nothing half-applied', async () => {
      const dir = tempDir('crash-postgres')
      dirs.push(dir)
      await crashAndRestart(postgresArgs(postgres!.url, join(dir, 'master.key')))
    }, 60_000)
  })
})
