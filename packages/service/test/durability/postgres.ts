// The throwaway PostgreSQL cluster of scripts/postgres.mjs (installs Debian's postgresql when
// initdb is missing, runs a cluster on a free loopback port, removed by dispose()).
export { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'

/** Flags for a service on `url` with the master key in `keyFile` (the same for every instance). */
export const postgresArgs = (url: string, keyFile: string) => [
  '--database-url',
  url,
  '--master-key-file',
  keyFile,
]
