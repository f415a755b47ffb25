// PostgreSQL is backed up with its own tools, as docs/operations.md says: pg_dump (custom format)
// while an instance serves, pg_restore into a fresh database, and an instance on the restored
// database signs with a wallet made before the dump.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { ensurePostgres } from '../../../../scripts/postgres.mjs'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'
import { type Instance, startInstance } from '../instances/instances.ts'
import { RootClient, resultOf } from '../support/RootClient.ts'
import { killAll } from '../support/serviceProcess.ts'

let cluster: PostgresCluster | undefined
const instances: Instance[] = []
const dir = tempDir('pg-backup')
afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()))
  killAll()
  await cluster?.dispose()
  removeDir(dir)
}, 120_000)

describe('PostgreSQL backup with pg_dump and pg_restore', () => {
  it('a dump taken while an instance serves restores into a fresh database where its wallets sign', {
    timeout: 600_000,
  }, async () => {
    cluster = await startPostgres()
    const masterKey = randomBytes(32).toString('hex')
    const source = await startInstance('source', { databaseUrl: cluster.url, masterKey })
    instances.push(source)
    const client = new RootClient(source.info)
    const wallet = resultOf(
      'create_wallet',
      await client.submit(source, 'create_wallet', { walletName: 'dumped', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const { binDir } = ensurePostgres()
    const file = join(dir, 'latchkey.dump')
    const dump = spawnSync(
      join(binDir, 'pg_dump'),
      ['--format=custom', '--no-owner', '--file', file, '--dbname', cluster.url],
      {
        encoding: 'utf8',
      },
    )
    expect(dump.stderr).toBe('')
    expect(dump.status).toBe(0)

    const admin = new pg.Client({ connectionString: cluster.url })
    await admin.connect()
    await admin.query('CREATE DATABASE restored')
    await admin.end()
    const restoredUrl = cluster.url.replace(/\/[^/]+$/, '/restored')
    const restore = spawnSync(
      join(binDir, 'pg_restore'),
      ['--no-owner', '--exit-on-error', '--dbname', restoredUrl, file],
      {
        encoding: 'utf8',
      },
    )
    expect(restore.stderr).toBe('')
    expect(restore.status).toBe(0)

    const restored = await startInstance('restored', {
      databaseUrl: restoredUrl,
      masterKey,
      args: ['--no-migrate'],
    })
    instances.push(restored)
    expect(restored.info.organizationId).toBe(source.info.organizationId)
    const signed = resultOf(
      'sign_raw_payload',
      await client.submit(restored, 'sign_raw_payload', {
        signWith: wallet.addresses[0],
        payload: '33'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    )
    expect(signed.r).toMatch(/^[0-9a-f]{64}$/)
  })
})
