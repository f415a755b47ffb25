// Master-key rotation under load: two instances on one PostgreSQL, each given the key in use and
// the new one, sign continuously while `rotate-master-key` re-seals everything; no request fails.
// Afterwards both restart with only the new key and every wallet signs, and the old key's bytes are
// in no file: neither the key files left nor a pg_dump of the database.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ensurePostgres } from '../../../../scripts/postgres.mjs'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'
import { type Instance, startInstance } from '../instances/instances.ts'
import { type Reply, RootClient, resultOf } from '../support/RootClient.ts'
import { killAll } from '../support/serviceProcess.ts'
import { runCommand } from './runCommand.ts'

let cluster: PostgresCluster | undefined
let instances: Instance[] = []
const keysDir = tempDir('rotate-keys')
afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()))
  killAll()
  await cluster?.dispose()
  removeDir(keysDir)
}, 120_000)

const signParams = (address: string, i: number) => ({
  signWith: address,
  payload: i.toString(16).padStart(64, '0'),
  encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
  hashFunction: 'HASH_FUNCTION_NO_OP',
})

describe('master-key rotation under load on PostgreSQL', () => {
  it('two instances keep signing while every secret is re-sealed; afterwards the new key alone serves and the old key is nowhere', {
    timeout: 900_000,
  }, async () => {
    cluster = await startPostgres()
    const oldKey = randomBytes(32).toString('hex')
    const newKey = randomBytes(32).toString('hex')
    const newKeyFile = join(keysDir, 'new.key')
    writeFileSync(newKeyFile, newKey, { mode: 0o600 })
    const url = cluster.url
    instances = await Promise.all(
      ['A', 'B'].map((name) =>
        startInstance(name, {
          databaseUrl: url,
          masterKey: oldKey,
          args: ['--new-master-key-file', newKeyFile],
        }),
      ),
    )
    const root = new RootClient(instances[0]!.info)
    const addresses: string[] = []
    for (let i = 0; i < 4; i++)
      addresses.push(
        ...resultOf(
          'create_wallet',
          await root.submit(instances[i % 2]!, 'create_wallet', {
            walletName: `before ${i}`,
            accounts: [ETHEREUM_ACCOUNT],
          }),
        ).addresses,
      )

    // Signing (and now and then a new wallet) over both instances until the rotation is done.
    let rotating = true
    const replies: Reply[] = []
    const load = (async () => {
      for (let i = 0; rotating; i++) {
        const target = instances[i % 2]!
        const reply =
          i % 10 === 9
            ? await root.submit(target, 'create_wallet', {
                walletName: `during ${i}`,
                accounts: [ETHEREUM_ACCOUNT],
              })
            : await root.submit(target, 'sign_raw_payload', signParams(addresses[i % addresses.length]!, i))
        replies.push(reply)
        if (i % 10 === 9 && reply.status === 200)
          addresses.push(...resultOf('create_wallet', reply).addresses)
      }
    })()
    const rotation = await runCommand(
      [
        'rotate-master-key',
        '--database-url',
        url,
        '--new-key-file',
        newKeyFile,
        '--batch-size',
        '5',
        '--settle-seconds',
        '3',
      ],
      { LATCHKEY_MASTER_KEY: oldKey },
      600_000,
    )
    rotating = false
    await load
    expect(rotation.stderr).toBe('')
    expect(rotation.code).toBe(0)
    expect(rotation.stdout).toMatch(/re-sealed \d+ secrets under master key version 2; retired version 1/)
    expect(replies.length).toBeGreaterThan(10)
    expect(
      replies.filter((reply) => reply.status !== 200).map((reply) => [reply.status, reply.body]),
    ).toEqual([])

    // Every instance restarts with only the new key; the old key is destroyed.
    await Promise.all(instances.map((instance) => instance.stop()))
    instances = await Promise.all(
      ['A2', 'B2'].map((name) => startInstance(name, { databaseUrl: url, masterKey: newKey })),
    )
    for (const [i, address] of addresses.entries()) {
      const reply = await root.submit(instances[i % 2]!, 'sign_raw_payload', signParams(address, 100_000 + i))
      expect({ address, status: reply.status }).toEqual({ address, status: 200 })
    }
    for (const instance of instances) expect(instance.stderr()).not.toContain(oldKey)

    // The old key's bytes are in no file: not the key files, not the database's dump.
    const { binDir } = ensurePostgres()
    const dump = spawnSync(join(binDir, 'pg_dump'), ['--dbname', url, '--no-owner'], {
      maxBuffer: 256 * 1024 * 1024,
    })
    expect(dump.status).toBe(0)
    const dumped = dump.stdout as Buffer
    expect(dumped.length).toBeGreaterThan(1000)
    expect(dumped.includes(Buffer.from(oldKey, 'hex'))).toBe(false)
    expect(dumped.includes(Buffer.from(oldKey))).toBe(false)
    expect(dumped.toString()).not.toMatch(/"v1\.[A-Za-z0-9_-]{16}\./)
    for (const file of readdirSync(keysDir)) {
      const bytes = readFileSync(join(keysDir, file))
      expect(bytes.includes(Buffer.from(oldKey))).toBe(false)
    }
    rmSync(newKeyFile)
  })
})
