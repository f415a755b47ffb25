// Two service instances on one fresh PostgreSQL database, as two processes of a deployment would
// be: the same master key, dev credentials and (injected) clock; the first start creates the schema
// and the dev organization, the second finds them.
import type { PostgresCluster } from '../../../../scripts/postgres.mjs'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { openPostgres } from '../../src/kernel/store/durableStores.ts'
import { createHarness, fakeClock, type Harness } from '../../src/testing/harness.ts'

/** Instances A and B on database `database` of `cluster` (created here), with `options` added to both. */
export async function twoInstances(
  cluster: PostgresCluster,
  database: string,
  options: Partial<CreateServiceOptions> = {},
): Promise<[Harness, Harness]> {
  const deployment = deploymentOn(cluster, database, options)
  return [await deployment.open(), await deployment.open()]
}

/**
 * A deployment on database `database` of `cluster` (created here): `open` starts one more instance
 * of it, with `options` and then `more` (a later instance with a setting the first ones lack, such
 * as a send worker a test holds back until it has looked).
 */
export function deploymentOn(
  cluster: PostgresCluster,
  database: string,
  options: Partial<CreateServiceOptions> = {},
) {
  cluster.psql(`CREATE DATABASE ${database}`)
  const url = cluster.url.replace(/\/[^/]+$/, `/${database}`)
  const shared = {
    clock: fakeClock(Date.now()),
    masterKey: crypto.getRandomValues(new Uint8Array(32)),
    dev: { apiPrivateKey: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') },
    ...options,
  }
  return {
    open: async (more: Partial<CreateServiceOptions> = {}): Promise<Harness> =>
      createHarness({ ...shared, ...more, store: await openPostgres(url) } as never),
  }
}
