// `init` run twice at the same instant against one empty PostgreSQL database (two operators, or a
// deploy script on two hosts): both processes migrate, make the service keys and the parent
// organization in their own transactions; exactly one organization results, and both print its
// ids. Two rounds, each on a fresh database; a third `init` with another key is refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bytesToHex } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testKey } from '../../src/testing/testKeys.ts'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { killAll, runCli } from './cli.ts'

const ROUNDS = 2
const dir = mkdtempSync(join(tmpdir(), 'latchkey-concurrent-init-'))
let cluster: PostgresCluster

beforeAll(async () => {
  cluster = await startPostgres()
  writeFileSync(join(dir, 'master.key'), `${bytesToHex(crypto.getRandomValues(new Uint8Array(32)))}\n`, {
    mode: 0o600,
  })
}, 60_000)

afterAll(async () => {
  killAll()
  await cluster?.dispose()
  rmSync(dir, { recursive: true, force: true })
})

/** A configuration file for `database` of the cluster. */
function configFor(database: string): string {
  const path = join(dir, `${database}.toml`)
  writeFileSync(
    path,
    `[storage]
database_url = "postgres://postgres@127.0.0.1:${cluster.port}/${database}"

[master_key]
key_file = "master.key"

[proxy]
allowed_origins = ["https://app.example.com"]
enabled_methods = ["passkey"]
`,
    // The URL is a secret (it could hold a password): the service refuses it in a file others can read.
    { mode: 0o600 },
  )
  return path
}

describe('init at the same instant on one empty database', () => {
  it('makes one parent organization, and both runs print its ids', { timeout: 240_000 }, async () => {
    const root = testKey()
    for (let round = 0; round < ROUNDS; round++) {
      const database = `init_${round}`
      cluster.psql(`create database ${database}`)
      const config = configFor(database)
      const runs = await Promise.all(
        [0, 1].map(() => runCli(['init', '--config', config, '--root-public-key', root.publicKey])),
      )
      for (const run of runs) expect(run.code, run.stderr).toBe(0)
      const [first, second] = runs.map((run) => JSON.parse(run.stdout))
      expect(second, `round ${round}`).toEqual(first)
      expect(cluster.psql('select count(*) from organizations', database)).toBe('1')
      // The root user and the auth proxy's user, once each; their keys, once each.
      expect(cluster.psql(`select data::json->>'userName' from users order by 1`, database)).toBe(
        'Auth Proxy\nRoot',
      )
      expect(
        cluster.psql(
          `select count(*) from "apiKeys" group by data::json->>'userId', data::json->>'name' having count(*) > 1`,
          database,
        ),
      ).toBe('')
      expect(cluster.psql(`select data::json->>'parentOrganizationId' from service`, database)).toBe(
        first.organizationId,
      )

      if (round === 0) {
        const other = await runCli(['init', '--config', config, '--root-public-key', testKey().publicKey])
        expect(other.code).toBe(2)
        expect(other.stderr).toMatch(/was made with another root key/)
        expect(cluster.psql('select count(*) from organizations', database)).toBe('1')
      }
    }
  })
})
