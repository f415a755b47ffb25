// Two service instances on one fresh PostgreSQL database, as two processes of a deployment would
// be: the same master key, dev credentials and (injected) clock; the first start creates the schema
// and the dev organization, the second finds them. `usePostgres` and `useTwoInstances` register the
// beforeAll/afterAll that start and stop them for the tests of the file or describe block they are
// called in.
import { afterAll, beforeAll } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
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

/** The timeouts (ms) of a set-up's beforeAll (`start`) and afterAll (`stop`; the configured hookTimeout when absent). */
export interface HookTimeouts {
  start: number
  stop?: number
}

/** The cluster `usePostgres` starts, read once its beforeAll has run. */
export interface UsedPostgres {
  readonly cluster: PostgresCluster
}

/**
 * A throwaway PostgreSQL cluster for the tests of the file or describe block this is called in:
 * started in a beforeAll, disposed of in an afterAll.
 */
export function usePostgres(timeouts: HookTimeouts = { start: 600_000, stop: 60_000 }): UsedPostgres {
  let cluster: PostgresCluster | undefined
  beforeAll(async () => {
    cluster = await startPostgres()
  }, timeouts.start)
  afterAll(async () => {
    await cluster?.dispose()
  }, timeouts.stop)
  return {
    get cluster() {
      if (!cluster) throw new Error('the PostgreSQL cluster is read before its beforeAll started it')
      return cluster
    },
  }
}

/** The instances `useTwoInstances` starts, read once its beforeAll has run. */
export interface UsedTwoInstances {
  readonly a: Harness
  readonly b: Harness
  readonly both: [Harness, Harness]
}

export interface UseTwoInstancesOptions {
  /** The cluster (a `usePostgres` of this or an enclosing block); absent, one of its own, started before the instances and disposed of after they close. */
  postgres?: UsedPostgres
  /** Added to both instances' options ({@link twoInstances}). */
  options?: Partial<CreateServiceOptions>
  /** @default on `postgres`: { start: 120_000 }; on a cluster of its own: { start: 600_000, stop: 60_000 } */
  timeouts?: HookTimeouts
}

/**
 * Instances A and B ({@link twoInstances}) on database `database`, for the tests of the file or
 * describe block this is called in: started in a beforeAll, closed (A, then B) in an afterAll.
 */
export function useTwoInstances(database: string, used: UseTwoInstancesOptions = {}): UsedTwoInstances {
  const { postgres, options = {} } = used
  const timeouts = used.timeouts ?? (postgres ? { start: 120_000 } : { start: 600_000, stop: 60_000 })
  let own: PostgresCluster | undefined
  let both: [Harness, Harness] | undefined
  beforeAll(async () => {
    if (!postgres) own = await startPostgres()
    both = await twoInstances(postgres ? postgres.cluster : own!, database, options)
  }, timeouts.start)
  afterAll(async () => {
    for (const h of both ?? []) await h.service.close()
    await own?.dispose()
  }, timeouts.stop)
  const started = () => {
    if (!both)
      throw new Error(`instances A and B on ${database} are read before their beforeAll started them`)
    return both
  }
  return {
    get a() {
      return started()[0]
    },
    get b() {
      return started()[1]
    },
    get both() {
      return started()
    },
  }
}
