// Node only: the command line of `latchkey-service` (see cli.ts): flags, the `--env` file and the data dir.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { SIGN_IN_METHODS, type SignInMethod } from '@latchkey/protocol'
import { parse as parseToml } from 'smol-toml'
import { redactUrl } from '../config/printConfig.ts'
import { RPC_TIMEOUT_MS } from '../config/sections/sending.ts'
import { sponsorshipOptions, sponsorshipSection } from '../config/sections/sponsorship.ts'
import { DEFAULT_FUND_ETH, type FundEntry, parseFundEntry } from '../dev/devFaucet.ts'
import { ServiceError } from '../kernel/base/errors.ts'
import { LOG_LEVELS, type LogFormat, type LogLevel } from '../observability/logger.ts'
import type { SponsorshipOptions } from '../sending/SendingOptions.ts'
import { DEFAULT_DRAIN_SECONDS, DEV_DRAIN_GRACE_SECONDS } from '../server/runServer.ts'

/** Where `--env` keeps data when no `--data-dir` is given, so the ids it writes stay valid. */
export const DEFAULT_ENV_DATA_DIR = '.latchkey'

/** What `dev --evm` gives its sponsor account on the node (ETH), so sponsored sends work at once. */
export const DEV_SPONSOR_ETH = '100'

/** What `dev --solana` gives its Solana sponsor (the fee payer of sponsored sends), in SOL. */
export const DEV_SPONSOR_SOL = '100'

export const USAGE = `Usage: latchkey-service dev [options]
       latchkey-service start --config FILE      (production: see start --help)
       latchkey-service init --config FILE --root-public-key HEX
       latchkey-service config check --config FILE | config docs
       latchkey-service migrate (--data-dir DIR | --database-url URL)
       latchkey-service backup --data-dir DIR --to FILE
       latchkey-service restore --from FILE --data-dir NEW_DIR
       latchkey-service rotate-master-key --new-key-file FILE (--data-dir DIR | --database-url URL)
       latchkey-service import --from users.jsonl --url URL --organization-id ID --root-key-file FILE
                               --trusted-signer-public-key HEX
       latchkey-service export-users --to users.jsonl --url URL --organization-id ID --root-key-file FILE
       latchkey-service webhooks rotate-key (--data-dir DIR | --database-url URL) [--overlap-hours H]

Each command answers --help with its options. Without a command, the flags below are dev's.

Starts the local Latchkey service: auth proxy at <url>/v1, activity API at <url>/public/v1, and
the dev outbox at <url>/dev/outbox (http://127.0.0.1:8787/dev/outbox by default), where every
e-mail/SMS one-time code is delivered.

  --port <n>                 port to listen on; 0 picks a free one (default 8787)
  --host <name>              loopback address to bind (default 127.0.0.1; dev never listens
                             beyond this machine: use \`latchkey-service start\` for that)
  --data-dir <dir>           keep data durably in <dir>, so ids and keys stay the same across
                             restarts (default: in memory); holds master.key, and a data dir the
                             service creates gets a .gitignore that ignores everything in it
  --database-url <url>       keep data in PostgreSQL (postgres://user:pass@host:5432/db; env
                             LATCHKEY_DATABASE_URL); several service processes may share one
                             database; needs the same master key on every instance
  --master-key-file <file>   the 32-byte master key (64 hex chars) that seals secrets at rest;
                             created (0600) if missing (env LATCHKEY_MASTER_KEY instead); default
                             <data-dir>/master.key
  --no-migrate               refuse a database that is behind this version instead of migrating
                             it (run \`latchkey-service migrate\` as its own step first)
  --skip-integrity-check     open --data-dir without SQLite's quick_check, which reads the whole
                             file at start (for a large file you check otherwise)
  --new-master-key-file <file>
                             while rotating: the new master key as well (the key a rotation
                             moves to); give it to every instance before rotate-master-key runs
  --crypto-threads <n>       worker threads that sign and derive keys, so requests never wait
                             behind a signature (default: one per core; 0 signs in the main thread)
  --env <file>               write the ids an app needs to <file> as VITE_LATCHKEY_* and/or
                             NEXT_PUBLIC_LATCHKEY_* variables (the prefix of the framework in the
                             package.json next to <file>; both when it names neither), only when
                             a value changed (other lines are kept); implies
                             --data-dir ${DEFAULT_ENV_DATA_DIR} unless --data-dir is given
  --env-prefix <p>           the prefixes --env writes: VITE_, NEXT_PUBLIC_ or both (comma-separated)
  --evm                      start a local EVM node for your app (Foundry's anvil, installed from
                             the npm registry on first use; chain 31337, Prague rules, ten funded
                             dev accounts), send through it (rpc for eip155:31337) and serve
                             POST /dev/faucet {"address":"0x…","eth":"1"}; stops with the service
                             (anvil goes into node_modules/.cache, or env LATCHKEY_ANVIL_DIR)
  --evm-port <n>             the node's port on 127.0.0.1 (default 8545, the port viem's foundry
                             chain and ethers' default provider use; 0 picks a free one)
  --solana                   start a local Solana node for your app (LiteSVM, an in-process
                             Solana runtime installed from the npm registry on first use into
                             node_modules/.cache, or env LATCHKEY_LITESVM_DIR) and send through it
                             (rpc for its solana:<genesis hash>); its sponsor account, the fee
                             payer of sponsored sends, gets ${DEV_SPONSOR_SOL} SOL; stops with the service
  --solana-port <n>          the Solana node's port on 127.0.0.1 (default 8899, the port of
                             solana-test-validator; 0 picks a free one)
  --fund <address>[=<eth>]   with --evm: give that account ETH (default ${DEFAULT_FUND_ETH}) on the node
                             (repeatable)
  --json                     print one JSON line with URLs and dev credentials first
  --rpc <caip2>=<url>        JSON-RPC node for sends and eth_send_raw_transaction (repeatable)
  --rpc-timeout-ms <ms>      timeout of each call to those nodes (default 10000); a send a killed
                             process had claimed is taken over 3 × this later ([sending] in start)
  --sponsor <caip2>=<addr>   sponsor gas on that chain through the LatchkeyDelegate deployed at
                             <addr> (repeatable); the dev sponsor account is printed in --json
                             as sponsorAddress: fund it on your node. With --evm, the node's
                             chain is sponsored without it: the delegate is deployed there and
                             the sponsor given ${DEV_SPONSOR_ETH} ETH
  --no-sponsor               with --evm or --solana: no sponsorship on their chains (no delegate
                             deployed, no Solana sponsor funded)
  --sponsorship <file>       the [sponsorship] section of a TOML file (a latchkey.toml: its other
                             sections are ignored), as \`start\` reads it: caps, organization_caps,
                             sponsors, delegates (env LATCHKEY_SPONSORSHIP_FILE)
  --sponsor-cap <name>=<n>   one cap of [sponsorship.caps] (repeatable, over the file's), e.g.
                             per_user_per_day_wei=10000000000000000 or per_transaction=500000
  --allowed-origins <a,b>    auth-proxy allowed origins (default *)
  --providers <a,b>          enabled sign-in methods (${SIGN_IN_METHODS.join(', ')})
  --session-seconds <n>      auth-proxy session lifetime in seconds
  --rp-id <id>               passkey relying-party id (default localhost)
  --admin-port <n>           serve GET /metrics (Prometheus), /livez and /readyz on this port
                             (0 picks a free one; default: no admin listener, no metrics)
  --admin-host <name>        interface of the admin listener (default 127.0.0.1)
  --log-format <f>           json (one JSON line per request and event) or pretty (default)
  --log-level <l>            debug, info (default), warn, error or silent
  --drain-grace-seconds <n>  on SIGTERM/SIGINT, how long requests are still served while /readyz
                             answers 503 (default 0.5)
  --drain-seconds <n>        then, how long the requests taken may take to finish (default 20)
  --version                  print the version
  --help                     show this help

Example: latchkey-service dev --env .env.local`

/** The dotenv prefixes `--env` may write, one per framework. */
export const ENV_PREFIXES = ['VITE_', 'NEXT_PUBLIC_'] as const
export type EnvPrefix = (typeof ENV_PREFIXES)[number]

/** The chain of the `--evm` node. */
export const DEV_EVM_CHAIN = 'eip155:31337'

export class UsageError extends ServiceError {
  override name = 'UsageError'
}

/** Every command `latchkey-service` knows (cli.ts loads each), as `--help` lists them. */
export const COMMAND_NAMES = [
  'dev',
  'start',
  'init',
  'config',
  'migrate',
  'backup',
  'restore',
  'rotate-master-key',
  'import',
  'export-users',
  'webhooks',
] as const

export interface CliOptions {
  port: number
  host: string
  dataDir: string | undefined
  /** PostgreSQL connection URL (`--database-url` or env `LATCHKEY_DATABASE_URL`). */
  databaseUrl: string | undefined
  masterKeyFile: string | undefined
  /** `--new-master-key-file`: the key a master-key rotation moves to, held beside the current one. */
  newMasterKeyFile: string | undefined
  envFile: string | undefined
  /** `--env-prefix`: the prefixes `--env` writes; undefined: detected from the app's package.json. */
  envPrefixes: EnvPrefix[] | undefined
  /** `--evm`: the port of the local EVM node to start; undefined: no node. */
  evmPort: number | undefined
  /** `--fund`: accounts to fund on the `--evm` node. */
  fund: FundEntry[]
  json: boolean
  rpc: Record<string, string>
  /** `--rpc-timeout-ms`: the timeout of each JSON-RPC call; undefined: the default. */
  rpcTimeoutMs: number | undefined
  /** `--sponsor`: delegate contract addresses by CAIP-2 chain; empty: no sponsorship. */
  sponsor: Record<string, string>
  /**
   * With `--evm` and neither `--no-sponsor` nor a `--sponsor` of its chain: deploy the delegate on the
   * node and sponsor its chain, the sponsor account funded.
   */
  evmSponsor: boolean
  /** `--solana`: the port of the local Solana node to start; undefined: no node. */
  solanaPort: number | undefined
  /** With `--solana` and not `--no-sponsor`: sponsor its chain, the Solana sponsor funded. */
  solanaSponsor: boolean
  /** `--sponsorship` and `--sponsor-cap`: the rest of `[sponsorship]` (caps, sponsors, delegates). */
  sponsorship: SponsorshipOptions | undefined
  allowedOrigins: string[] | undefined
  providers: SignInMethod[] | undefined
  sessionSeconds: string | undefined
  rpId: string | undefined
  /** Worker threads for signing and derivation; undefined: one per core. */
  cryptoThreads: number | undefined
  /** Port of the admin listener (metrics, probes); undefined: none. */
  adminPort: number | undefined
  adminHost: string
  logFormat: LogFormat
  logLevel: LogLevel
  drainSeconds: number
  drainGraceSeconds: number
  /** `--no-migrate`: refuse a database that is behind instead of migrating it. */
  noMigrate: boolean
  /** `--skip-integrity-check`: open the data dir without SQLite's `quick_check`. */
  skipIntegrityCheck: boolean
}

const NUMERIC_FLAGS = new Set([
  '--port',
  '--session-seconds',
  '--crypto-threads',
  '--admin-port',
  '--drain-seconds',
  '--drain-grace-seconds',
  '--evm-port',
  '--solana-port',
  '--rpc-timeout-ms',
])

/**
 * Parses the command line; throws UsageError with a clear message on bad input. No arguments at
 * all is a request for help (the service starts only with the `dev` command).
 */
export function parseCli(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): CliOptions | 'help' | 'version' {
  if (argv.length === 0) return 'help'
  const command = argv[0]!
  if (command === 'help') return 'help'
  // Flags alone (`latchkey-service --port 0`) still mean `dev`, as in earlier versions.
  if (command !== 'dev' && !command.startsWith('-'))
    throw new UsageError(`unknown command ${command} (commands: ${COMMAND_NAMES.join(', ')})`)
  const rest = command === 'dev' ? argv.slice(1) : argv
  // `--port -1` would read as a missing value; join it so the flag's own check explains it.
  const args: string[] = []
  for (let i = 0; i < rest.length; i++) {
    const next = rest[i + 1]
    if (NUMERIC_FLAGS.has(rest[i]!) && next !== undefined && /^-\d/.test(next)) {
      args.push(`${rest[i]}=${next}`)
      i++
    } else args.push(rest[i]!)
  }
  let values: Record<string, string | boolean | string[] | undefined>
  try {
    values = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string', default: '8787' },
        host: { type: 'string', default: '127.0.0.1' },
        'data-dir': { type: 'string' },
        'database-url': { type: 'string' },
        'master-key-file': { type: 'string' },
        'new-master-key-file': { type: 'string' },
        env: { type: 'string' },
        'env-prefix': { type: 'string' },
        evm: { type: 'boolean', default: false },
        'evm-port': { type: 'string' },
        solana: { type: 'boolean', default: false },
        'solana-port': { type: 'string' },
        fund: { type: 'string', multiple: true },
        json: { type: 'boolean', default: false },
        rpc: { type: 'string', multiple: true },
        'rpc-timeout-ms': { type: 'string' },
        sponsor: { type: 'string', multiple: true },
        'no-sponsor': { type: 'boolean', default: false },
        sponsorship: { type: 'string' },
        'sponsor-cap': { type: 'string', multiple: true },
        'allowed-origins': { type: 'string' },
        providers: { type: 'string' },
        'session-seconds': { type: 'string' },
        'rp-id': { type: 'string' },
        'crypto-threads': { type: 'string' },
        'admin-port': { type: 'string' },
        'admin-host': { type: 'string', default: '127.0.0.1' },
        'log-format': { type: 'string', default: 'pretty' },
        'log-level': { type: 'string', default: 'info' },
        'drain-seconds': { type: 'string', default: String(DEFAULT_DRAIN_SECONDS) },
        'drain-grace-seconds': { type: 'string', default: String(DEV_DRAIN_GRACE_SECONDS) },
        'no-migrate': { type: 'boolean', default: false },
        'skip-integrity-check': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    }).values
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (values.help) return 'help'
  if (values.version) return 'version'
  const port = Number(values.port)
  if (!/^\d+$/.test(String(values.port)) || port > 65535)
    throw new UsageError(`--port must be a number from 0 to 65535, got ${values.port}`)
  const rpc: Record<string, string> = {}
  for (const entry of (values.rpc as string[] | undefined) ?? []) {
    const match = /^([-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32})=(https?:\/\/.+)$/.exec(entry)
    if (!match) {
      // The URL shown as a refused [rpc] value is (redactUrl): a provider's key may be in its path.
      const equals = entry.indexOf('=')
      const caip2 = equals < 0 ? '' : entry.slice(0, equals)
      const shown = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(caip2)
        ? `${caip2}=${redactUrl(entry.slice(equals + 1))}`
        : /[:/@?#]/.test(entry)
          ? redactUrl(entry)
          : entry
      throw new UsageError(`--rpc must look like eip155:31337=http://127.0.0.1:8545, got ${shown}`)
    }
    rpc[match[1]!] = match[2]!
  }
  const evmPortText = values['evm-port'] as string | undefined
  if (evmPortText !== undefined && !values.evm) throw new UsageError('--evm-port needs --evm')
  if (evmPortText !== undefined && (!/^\d+$/.test(evmPortText) || Number(evmPortText) > 65535))
    throw new UsageError(`--evm-port must be a number from 0 to 65535, got ${evmPortText}`)
  const evmPort = values.evm ? Number(evmPortText ?? 8545) : undefined
  const solanaPortText = values['solana-port'] as string | undefined
  if (solanaPortText !== undefined && !values.solana) throw new UsageError('--solana-port needs --solana')
  if (solanaPortText !== undefined && (!/^\d+$/.test(solanaPortText) || Number(solanaPortText) > 65535))
    throw new UsageError(`--solana-port must be a number from 0 to 65535, got ${solanaPortText}`)
  const solanaPort = values.solana ? Number(solanaPortText ?? 8899) : undefined
  if (solanaPort !== undefined && evmPort !== undefined && solanaPort === evmPort && solanaPort !== 0)
    throw new UsageError(`--solana-port and --evm-port are both ${solanaPort}; give each node its own port`)
  if (evmPort !== undefined && rpc[DEV_EVM_CHAIN] !== undefined)
    throw new UsageError(
      `--evm runs the node of ${DEV_EVM_CHAIN}; drop --rpc ${DEV_EVM_CHAIN}=… (or drop --evm to use your own node)`,
    )
  const sponsor: Record<string, string> = {}
  for (const entry of (values.sponsor as string[] | undefined) ?? []) {
    const match = /^(eip155:\d{1,32})=(0x[0-9a-fA-F]{40})$/.exec(entry)
    if (!match)
      throw new UsageError(
        `--sponsor must look like eip155:31337=0x<delegate contract address>, got ${entry}`,
      )
    const onEvmNode = evmPort !== undefined && match[1] === DEV_EVM_CHAIN
    if (rpc[match[1]!] === undefined && !onEvmNode)
      throw new UsageError(`--sponsor ${match[1]} needs --rpc ${match[1]}=<url> (the node it sends to)`)
    sponsor[match[1]!] = match[2]!
  }
  if (values['no-sponsor'] && evmPort === undefined && solanaPort === undefined)
    throw new UsageError(
      '--no-sponsor needs --evm or --solana (it turns off the sponsorship they set up on their nodes)',
    )
  if (values['no-sponsor'] && sponsor[DEV_EVM_CHAIN] !== undefined)
    throw new UsageError(`--no-sponsor and --sponsor ${DEV_EVM_CHAIN}=… contradict each other; pick one`)
  const sponsorship = readSponsorship(
    (values.sponsorship as string | undefined) ?? (env.LATCHKEY_SPONSORSHIP_FILE || undefined),
    (values['sponsor-cap'] as string[] | undefined) ?? [],
  )
  const fund: FundEntry[] = []
  for (const entry of (values.fund as string[] | undefined) ?? []) {
    if (evmPort === undefined)
      throw new UsageError('--fund needs --evm (it funds accounts on the local node --evm starts)')
    const parsed = parseFundEntry(entry)
    if (!parsed)
      throw new UsageError(
        `--fund must look like 0x<40 hex digits> or 0x<40 hex digits>=<eth> (e.g. =1.5, at most 1000000), got ${entry}`,
      )
    fund.push(parsed)
  }
  const list = (value: unknown) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean)
      : undefined
  const providers = list(values.providers)
  const unknown = providers?.find((provider) => !(SIGN_IN_METHODS as readonly string[]).includes(provider))
  if (unknown !== undefined)
    throw new UsageError(
      `--providers: unknown sign-in method ${unknown} (known: ${SIGN_IN_METHODS.join(', ')})`,
    )
  const rpcTimeoutMs = values['rpc-timeout-ms'] as string | undefined
  if (
    rpcTimeoutMs !== undefined &&
    (!/^\d+$/.test(rpcTimeoutMs) ||
      Number(rpcTimeoutMs) < RPC_TIMEOUT_MS.min ||
      Number(rpcTimeoutMs) > RPC_TIMEOUT_MS.max)
  )
    throw new UsageError(
      `--rpc-timeout-ms must be a whole number of milliseconds from ${RPC_TIMEOUT_MS.min} to ${RPC_TIMEOUT_MS.max}, got ${rpcTimeoutMs}`,
    )
  const sessionSeconds = values['session-seconds'] as string | undefined
  if (sessionSeconds !== undefined && (!/^\d+$/.test(sessionSeconds) || Number(sessionSeconds) < 1))
    throw new UsageError(`--session-seconds must be a positive number of seconds, got ${sessionSeconds}`)
  const envFile = values.env as string | undefined
  if (envFile === '') throw new UsageError('--env needs a file name, e.g. --env .env.local')
  const envPrefixes = list(values['env-prefix'])
  if (envPrefixes !== undefined) {
    if (envFile === undefined) throw new UsageError('--env-prefix needs --env <file>')
    const wrong = envPrefixes.find((prefix) => !(ENV_PREFIXES as readonly string[]).includes(prefix))
    if (wrong !== undefined || envPrefixes.length === 0)
      throw new UsageError(`--env-prefix must be ${ENV_PREFIXES.join(', ')} or both, got ${wrong ?? ''}`)
  }
  if (values['data-dir'] === '')
    throw new UsageError('--data-dir needs a directory, e.g. --data-dir .latchkey')
  const databaseUrl =
    (values['database-url'] as string | undefined) ?? (env.LATCHKEY_DATABASE_URL || undefined)
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\/./.test(databaseUrl))
    throw new UsageError(
      '--database-url must be a PostgreSQL URL like postgres://user@127.0.0.1:5432/latchkey',
    )
  if (databaseUrl !== undefined && values['data-dir'] !== undefined)
    throw new UsageError('--data-dir and --database-url are two places for the same data; pick one')
  if (values['master-key-file'] === '')
    throw new UsageError(
      '--master-key-file needs a file name, e.g. --master-key-file /etc/latchkey/master.key',
    )
  const host = values.host as string
  if (!isLoopbackBind(host))
    throw new UsageError(
      `--host ${host}: dev serves this machine only (its outbox and dev identity provider hand out every code and account), so it binds a loopback address (127.0.0.1, ::1, localhost); to serve other machines use latchkey-service start`,
    )
  const cryptoThreads = values['crypto-threads'] as string | undefined
  if (cryptoThreads !== undefined && (!/^\d+$/.test(cryptoThreads) || Number(cryptoThreads) > 64))
    throw new UsageError(`--crypto-threads must be a number from 0 to 64, got ${cryptoThreads}`)
  const adminPort = values['admin-port'] as string | undefined
  if (adminPort !== undefined && (!/^\d+$/.test(adminPort) || Number(adminPort) > 65535))
    throw new UsageError(`--admin-port must be a number from 0 to 65535, got ${adminPort}`)
  const logFormat = values['log-format'] as string
  if (logFormat !== 'json' && logFormat !== 'pretty')
    throw new UsageError(`--log-format must be json or pretty, got ${logFormat}`)
  const logLevel = values['log-level'] as string
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${logLevel}`)
  const drainSeconds = values['drain-seconds'] as string
  if (!/^\d+(\.\d+)?$/.test(drainSeconds) || Number(drainSeconds) > 3600)
    throw new UsageError(`--drain-seconds must be a number of seconds from 0 to 3600, got ${drainSeconds}`)
  const drainGraceSeconds = values['drain-grace-seconds'] as string
  if (!/^\d+(\.\d+)?$/.test(drainGraceSeconds) || Number(drainGraceSeconds) > 3600)
    throw new UsageError(
      `--drain-grace-seconds must be a number of seconds from 0 to 3600, got ${drainGraceSeconds}`,
    )
  return {
    port,
    host,
    dataDir:
      (values['data-dir'] as string | undefined) ??
      (envFile && databaseUrl === undefined ? DEFAULT_ENV_DATA_DIR : undefined),
    databaseUrl,
    masterKeyFile: values['master-key-file'] as string | undefined,
    newMasterKeyFile: values['new-master-key-file'] as string | undefined,
    envFile,
    envPrefixes: envPrefixes as EnvPrefix[] | undefined,
    evmPort,
    fund,
    json: values.json as boolean,
    rpc,
    rpcTimeoutMs: rpcTimeoutMs === undefined ? undefined : Number(rpcTimeoutMs),
    sponsor,
    evmSponsor: evmPort !== undefined && !values['no-sponsor'] && sponsor[DEV_EVM_CHAIN] === undefined,
    solanaPort,
    solanaSponsor: solanaPort !== undefined && !values['no-sponsor'],
    sponsorship,
    allowedOrigins: list(values['allowed-origins']),
    providers: providers as SignInMethod[] | undefined,
    sessionSeconds,
    rpId: values['rp-id'] as string | undefined,
    cryptoThreads: cryptoThreads === undefined ? undefined : Number(cryptoThreads),
    adminPort: adminPort === undefined ? undefined : Number(adminPort),
    adminHost: values['admin-host'] as string,
    logFormat,
    logLevel: logLevel as LogLevel,
    drainSeconds: Number(drainSeconds),
    drainGraceSeconds: Number(drainGraceSeconds),
    noMigrate: values['no-migrate'] as boolean,
    skipIntegrityCheck: values['skip-integrity-check'] as boolean,
  }
}

/** A bind address on this machine only: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackBind(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/** What an app needs from a running local service (the `--json` line has these and more). */
export interface AppIds {
  baseUrl: string
  authProxyUrl: string
  authProxyConfigId: string | null
  organizationId: string
  trustedSignerPublicKey: string
}

const ENV_NAMES: Record<keyof AppIds, string> = {
  authProxyUrl: 'AUTH_PROXY_URL',
  baseUrl: 'BASE_URL',
  authProxyConfigId: 'AUTH_PROXY_CONFIG_ID',
  organizationId: 'ORGANIZATION_ID',
  trustedSignerPublicKey: 'TRUSTED_SIGNER_PUBLIC_KEY',
}

/** The local service's URLs an app's dev code reads beside its config (the outbox, the `--evm` node). */
export interface LocalUrls {
  outboxUrl: string
  /** The `--evm` node; undefined without `--evm` (written empty: viem's `http('')` uses the chain's default). */
  rpcUrl?: string | undefined
  /** The `--solana` node, its CAIP-2 id and its sponsor (fee payer): written only with `--solana`. */
  solana?: { rpcUrl: string; caip2: string; sponsorAddress?: string | undefined } | undefined
}

const LOCAL_ENV_NAMES = { outboxUrl: 'OUTBOX_URL', rpcUrl: 'RPC_URL' } as const
const SOLANA_ENV_NAMES = {
  rpcUrl: 'SOLANA_RPC_URL',
  caip2: 'SOLANA_CAIP2',
  sponsorAddress: 'SOLANA_SPONSOR_ADDRESS',
} as const

/**
 * The app's ids as `<prefix>LATCHKEY_*` variables (never the API key), for each of `prefixes`
 * (`VITE_`, `NEXT_PUBLIC_`), and the local URLs when given (`OUTBOX_URL`, `RPC_URL`; with
 * `--solana` also `SOLANA_RPC_URL`, `SOLANA_CAIP2`, `SOLANA_SPONSOR_ADDRESS`).
 */
export function envVariables(
  ids: AppIds,
  prefixes: readonly EnvPrefix[] = ENV_PREFIXES,
  local?: LocalUrls,
): Record<string, string> {
  const variables: Record<string, string> = {}
  for (const prefix of prefixes) {
    for (const [field, name] of Object.entries(ENV_NAMES))
      variables[`${prefix}LATCHKEY_${name}`] = ids[field as keyof AppIds] ?? ''
    if (local)
      for (const [field, name] of Object.entries(LOCAL_ENV_NAMES))
        variables[`${prefix}LATCHKEY_${name}`] = local[field as keyof typeof LOCAL_ENV_NAMES] ?? ''
    if (local?.solana)
      for (const [field, name] of Object.entries(SOLANA_ENV_NAMES))
        variables[`${prefix}LATCHKEY_${name}`] = local.solana[field as keyof typeof SOLANA_ENV_NAMES] ?? ''
  }
  return variables
}

/**
 * The prefixes the app next to `envFile` reads: `NEXT_PUBLIC_` when its package.json depends on
 * `next`, `VITE_` when on `vite` (Next.js wins when it names both: Next.js does not read `VITE_`);
 * both when there is no package.json or it names neither.
 */
export function detectEnvPrefixes(envFile: string): EnvPrefix[] {
  let manifest: Record<string, unknown>
  try {
    manifest = JSON.parse(readFileSync(join(dirname(envFile), 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >
  } catch {
    return [...ENV_PREFIXES]
  }
  const names = new Set<string>()
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
    const deps = manifest[field]
    if (deps && typeof deps === 'object') for (const name of Object.keys(deps)) names.add(name)
  }
  if (names.has('next')) return ['NEXT_PUBLIC_']
  if (names.has('vite')) return ['VITE_']
  return [...ENV_PREFIXES]
}

/**
 * Sets `variables` in the dotenv file `file` (see mergeEnvFile), writing it only when its text
 * changes: a dev server that watches the file (Vite, Next.js) restarts on every write.
 * Returns true when it wrote.
 */
export function writeEnvFile(file: string, variables: Record<string, string>): boolean {
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : undefined
  const merged = mergeEnvFile(existing ?? '', variables)
  if (merged === existing) return false
  writeFileSync(file, merged)
  return true
}

/**
 * `existing` (a dotenv file's text) with `variables` set: a line that already assigns one is
 * replaced in place, the others are appended; every other line stays as it was.
 */
export function mergeEnvFile(existing: string, variables: Record<string, string>): string {
  const pending = new Map(Object.entries(variables))
  const lines = existing === '' ? [] : existing.replace(/\r?\n$/, '').split(/\r?\n/)
  const merged = lines.map((line) => {
    const name = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1]
    if (name === undefined || !pending.has(name)) return line
    const value = pending.get(name)!
    pending.delete(name)
    return `${name}=${value}`
  })
  if (pending.size > 0) {
    if (merged.length > 0 && merged.at(-1) !== '') merged.push('')
    merged.push('# written by `latchkey-service dev --env` (local service ids)')
    for (const [name, value] of pending) merged.push(`${name}=${value}`)
  }
  return `${merged.join('\n')}\n`
}

/**
 * Creates the data dir if needed. A dir created here (or found empty) gets a `.gitignore` of `*`,
 * since it will hold `master.key`; returns a warning for an existing dir without one.
 */
export function prepareDataDir(dir: string): { createdGitignore: boolean; warning?: string } {
  const fresh = !existsSync(dir) || readdirSync(dir).length === 0
  mkdirSync(dir, { recursive: true })
  const gitignore = join(dir, '.gitignore')
  if (fresh) {
    writeFileSync(gitignore, '# Latchkey local service data, master.key included: never commit it\n*\n')
    return { createdGitignore: true }
  }
  if (existsSync(gitignore)) return { createdGitignore: false }
  return {
    createdGitignore: false,
    warning: `${dir} holds master.key and has no .gitignore: keep it out of version control`,
  }
}

/** Caps whose values are wei (decimal strings in TOML); the others are whole numbers. */
const isWeiCap = (name: string) => name.endsWith('_wei') || name.endsWith('_per_gas')

/**
 * `--sponsorship <file>` (the `[sponsorship]` table of a TOML file) with `--sponsor-cap` over its
 * caps, checked as `start` checks the section; undefined when neither is given.
 */
export function readSponsorship(file: string | undefined, caps: string[]): SponsorshipOptions | undefined {
  if (file === undefined && caps.length === 0) return undefined
  let table: Record<string, unknown> = {}
  if (file !== undefined) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      throw new UsageError(
        `--sponsorship ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      )
    }
    try {
      table = (parseToml(text).sponsorship as Record<string, unknown> | undefined) ?? {}
    } catch (error) {
      throw new UsageError(`--sponsorship ${file}: not TOML: ${(error as Error).message.split('\n')[0]}`)
    }
  }
  const fileCaps = (table.caps as Record<string, unknown> | undefined) ?? {}
  const flagCaps: Record<string, unknown> = {}
  for (const entry of caps) {
    const match = /^([a-z_]+)=(\d{1,31})$/.exec(entry)
    if (!match)
      throw new UsageError(
        `--sponsor-cap must look like per_user_per_day_wei=10000000000000000, got ${entry}`,
      )
    flagCaps[match[1]!] = isWeiCap(match[1]!) ? match[2]! : Number(match[2]!)
  }
  const parsed = sponsorshipSection.safeParse({ delegates: {}, ...table, caps: { ...fileCaps, ...flagCaps } })
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const where = ['sponsorship', ...issue.path.map(String)].join('.')
    const from = issue.path[0] === 'caps' && caps.length > 0 ? ' (--sponsor-cap or the file)' : ''
    throw new UsageError(`${where}${from}: ${issue.message}`)
  }
  return sponsorshipOptions(parsed.data)
}
