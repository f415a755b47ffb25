// Node only: `latchkey-service dev …` (and `npm run service -- …` in the repository). Starts the
// local service on a port, with its dev surfaces (outbox, dev identity provider, dev root key).

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { addr } from 'micro-eth-signer'
import { createService, WrongMasterKeyError } from '../assembly/createService.ts'
import { redactUrlCredentials } from '../config/printConfig.ts'
import { devFaucetPlugin, formatEth, fundAccount } from '../dev/devFaucet.ts'
import { type EvmNode, startEvmNode } from '../dev/startEvmNode.ts'
import { LAMPORTS_PER_SOL, type SolanaNode, startSolanaNode } from '../dev/startSolanaNode.ts'
import { loadMasterKey, loadMasterKeyFile, openDataDir, openPostgres } from '../kernel/store/durableStores.ts'
import { lockDataDir } from '../kernel/store/lockDataDir.ts'
import { observability } from '../observability/observability.ts'
import { deployDelegate } from '../sending/delegate/deployDelegate.ts'
import type { SponsorshipOptions } from '../sending/SendingOptions.ts'
import { sponsorAddress } from '../sending/sponsors.ts'
import { ListenError, runServer } from '../server/runServer.ts'
import { nodeWebhookTransport } from '../webhooks/nodeTransport.ts'
import { cryptoWorkers } from '../workers/cryptoWorkers.ts'
import { nativeVerifyP256 } from '../workers/nativeVerify.ts'
import {
  type CliOptions,
  DEV_EVM_CHAIN,
  DEV_SPONSOR_ETH,
  DEV_SPONSOR_SOL,
  detectEnvPrefixes,
  envVariables,
  parseCli,
  prepareDataDir,
  USAGE,
  UsageError,
  writeEnvFile,
} from './parseDevFlags.ts'

const NAME = 'latchkey-service'

/** Runs `dev` with its arguments (the command name included: flags alone still mean `dev`). */
export async function run(argv: string[]): Promise<void> {
  let options: CliOptions | 'help' | 'version'
  try {
    options = parseCli(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    process.stderr.write(`${NAME}: ${error.message}\n\n${USAGE}\n`)
    process.exit(2)
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  if (options === 'version') {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string
    }
    process.stdout.write(`${pkg.version}\n`)
    return
  }
  // The data dir is this process's before anything is created in it (the master key included).
  const lock = options.dataDir ? await lockDataDir(options.dataDir) : undefined
  if (options.dataDir) {
    const { warning } = prepareDataDir(options.dataDir)
    if (warning) process.stderr.write(`${NAME}: warning: ${warning}\n`)
  }
  let masterKey: Uint8Array | undefined
  /** Where the master key came from, for a message that says which key to check. */
  let masterKeySource = 'a new in-memory key'
  if (options.masterKeyFile) {
    masterKey = loadMasterKeyFile(options.masterKeyFile)
    masterKeySource = `--master-key-file ${options.masterKeyFile}`
  } else if (options.dataDir) {
    masterKey = loadMasterKey(options.dataDir)
    masterKeySource = `${join(options.dataDir, 'master.key')}`
  } else if (process.env.LATCHKEY_MASTER_KEY !== undefined) {
    masterKey = loadMasterKey('.', process.env.LATCHKEY_MASTER_KEY)
    masterKeySource = 'LATCHKEY_MASTER_KEY'
  }
  let newMasterKey: Uint8Array | undefined
  if (options.newMasterKeyFile) {
    if (!masterKey)
      throw new Error(
        '--new-master-key-file needs the key in use as well (--master-key-file, LATCHKEY_MASTER_KEY or --data-dir)',
      )
    const text = readFileSync(options.newMasterKeyFile, 'utf8').trim()
    if (!/^[0-9a-f]{64}$/i.test(text))
      throw new Error(`${options.newMasterKeyFile} is not a 64-hex-character key`)
    newMasterKey = Uint8Array.from(Buffer.from(text, 'hex'))
  }
  if (options.databaseUrl && !masterKey)
    throw new Error(
      'PostgreSQL needs the master key that seals its secrets: pass --master-key-file <file> or set LATCHKEY_MASTER_KEY (64 hex chars), the same on every instance',
    )
  // A file-system or database outage answers 503 and is recovered from; a crash must not follow.
  process.on('SIGXFSZ', () => undefined)
  const migrate = !options.noMigrate
  const store = options.databaseUrl
    ? await openPostgres(options.databaseUrl, { migrate })
    : options.dataDir
      ? await openDataDir(options.dataDir, {
          migrate,
          integrityCheck: !options.skipIntegrityCheck,
          ...(lock ? { lock } : {}),
        })
      : undefined
  const telemetry = observability(options)
  const evm = options.evmPort === undefined ? undefined : await startDevChain(options.evmPort, store)
  const solana =
    options.solanaPort === undefined ? undefined : await startDevSolana(options.solanaPort, store, evm)
  const sponsorship = await devSponsorship(options, evm)
  const rpc = { ...options.rpc }
  if (evm) rpc[DEV_EVM_CHAIN] = evm.url
  if (solana) rpc[solana.caip2] = solana.url
  const service = await createService({
    ...telemetry.serviceOptions,
    ...(store ? { store } : {}),
    ...(masterKey ? (newMasterKey ? { masterKeys: [masterKey, newMasterKey] } : { masterKey }) : {}),
    rpc,
    ...(options.rpcTimeoutMs === undefined ? {} : { sending: { rpcTimeoutMs: options.rpcTimeoutMs } }),
    ...(evm ? { plugins: [devFaucetPlugin(evm)] } : {}),
    ...(sponsorship ? { sponsorship } : {}),
    crypto: cryptoWorkers(options.cryptoThreads === undefined ? {} : { threads: options.cryptoThreads }),
    verifyP256: nativeVerifyP256,
    // Dev: http and loopback receivers allowed (a local app's back end).
    webhooks: { transport: nodeWebhookTransport() },
    ...(options.rpId ? { webauthn: { rpId: options.rpId } } : {}),
    proxySettings: {
      ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
      ...(options.providers ? { enabledProviders: options.providers } : {}),
      ...(options.sessionSeconds ? { sessionExpirationSeconds: options.sessionSeconds } : {}),
    },
  }).catch(async (error: Error) => {
    await store?.close()
    await evm?.close()
    await solana?.close()
    if (error instanceof WrongMasterKeyError)
      throw new Error(`${error.message} (master key read from ${masterKeySource})`)
    throw error
  })
  const server = await runServer(service, { ...options, ...telemetry.serverOptions }).catch(
    async (error: Error) => {
      const hint =
        error instanceof ListenError && error.code === 'EADDRINUSE'
          ? `port ${error.port} is already in use; pass ${error.flag} 0 to pick a free port (or ${error.flag} <n>)`
          : error.message
      const where =
        error instanceof ListenError ? `${error.host}:${error.port}` : `${options.host}:${options.port}`
      process.stderr.write(`${NAME}: cannot listen on ${where}: ${hint}\n`)
      await service.close()
      process.exit(1)
    },
  )
  const baseUrl = server.url
  const dev = service.dev
  const ids = {
    baseUrl,
    authProxyUrl: baseUrl,
    organizationId: dev.organizationId,
    authProxyConfigId: dev.authProxyConfigId ?? null,
    trustedSignerPublicKey: dev.signerPublicKey,
  }
  const info: Record<string, unknown> = {
    ...ids,
    apiPublicKey: dev.apiPublicKey,
    apiPrivateKey: dev.apiPrivateKey,
    outboxUrl: `${baseUrl}/dev/outbox`,
    ...(server.adminUrl ? { adminUrl: server.adminUrl } : {}),
    ...(sponsorAddress(service.runtime) ? { sponsorAddress: sponsorAddress(service.runtime) } : {}),
    /** @deprecated the same value as `trustedSignerPublicKey`; kept for one version. */
    signerPublicKey: dev.signerPublicKey,
  }
  const solanaSponsor =
    solana && options.solanaSponsor ? sponsorAddress(service.runtime, 'default', 'solana') : undefined
  const solanaSponsorBalance = solana && solanaSponsor ? topUpSolana(solana, solanaSponsor) : undefined
  if (solana) {
    info.solanaRpcUrl = solana.url
    info.solanaCaip2 = solana.caip2
    if (solanaSponsor) info.solanaSponsorAddress = solanaSponsor
  }
  const envPrefixes = options.envFile
    ? (options.envPrefixes ?? detectEnvPrefixes(options.envFile))
    : undefined
  const envWritten =
    options.envFile && envPrefixes
      ? writeEnvFile(
          options.envFile,
          envVariables(ids, envPrefixes, {
            outboxUrl: `${baseUrl}/dev/outbox`,
            rpcUrl: evm?.url,
            ...(solana
              ? { solana: { rpcUrl: solana.url, caip2: solana.caip2, sponsorAddress: solanaSponsor } }
              : {}),
          }),
        )
      : false
  if (evm) {
    info.evmRpcUrl = evm.url
    info.evmChainId = evm.chainId
  }
  const sponsor = sponsorAddress(service.runtime)
  const sponsorBalance =
    evm && sponsor && sponsorship?.delegates[DEV_EVM_CHAIN] ? await topUp(evm, sponsor) : undefined
  const funded: string[] = []
  for (const { address, wei } of options.fund) {
    const balance = await fundAccount(evm!.rpc, address, wei)
    funded.push(
      `  funded                  ${address} +${formatEth(wei)} ETH (balance ${formatEth(balance)} ETH)`,
    )
  }
  if (options.json) process.stdout.write(`${JSON.stringify(info)}\n`)
  else
    process.stdout.write(
      [
        `Latchkey local service on ${baseUrl}`,
        `  activity API            ${baseUrl}/public/v1`,
        `  auth proxy              ${baseUrl}/v1`,
        `  outbox (OTP codes)      ${info.outboxUrl}`,
        ...(server.adminUrl ? [`  metrics, probes         ${server.adminUrl}/metrics, /livez, /readyz`] : []),
        '',
        '  for your app config:',
        `  authProxyConfigId       ${info.authProxyConfigId ?? 'none'}`,
        `  organizationId          ${info.organizationId}`,
        `  trustedSignerPublicKey  ${info.trustedSignerPublicKey}`,
        ...(options.envFile && envPrefixes
          ? [
              `  (${envWritten ? 'written to' : 'unchanged in'} ${options.envFile} as ${envPrefixes.map((prefix) => `${prefix}LATCHKEY_*`).join(' and ')})`,
            ]
          : []),
        ...(evm
          ? [
              '',
              `  EVM node (anvil)        ${evm.url}   chain id ${evm.chainId} (${evm.caip2})`,
              `  faucet                  POST ${baseUrl}/dev/faucet {"address":"0x…","eth":"1"}`,
              sponsorBalance === undefined
                ? '  gas sponsorship         off (--no-sponsor)'
                : `  gas sponsor             ${sponsor} (${formatEth(sponsorBalance)} ETH), delegate ${sponsorship?.delegates[DEV_EVM_CHAIN]}`,
              ...funded,
            ]
          : []),
        ...(solana
          ? [
              '',
              `  Solana node (LiteSVM)   ${solana.url}   ${solana.caip2}`,
              solanaSponsorBalance === undefined
                ? '  Solana sponsorship      off (--no-sponsor)'
                : `  Solana sponsor          ${solanaSponsor} (${formatSol(solanaSponsorBalance)} SOL), the fee payer of sponsor: true sends`,
            ]
          : []),
        '',
        `  dev API key             ${info.apiPublicKey}`,
        `  dev API private key     ${info.apiPrivateKey}   (dev credentials: never use them for real funds)`,
        `  data                    ${options.databaseUrl ? `PostgreSQL ${shownDatabaseUrl(options.databaseUrl)}` : options.dataDir ? `${options.dataDir} (SQLite)` : 'in memory: ids change on restart (use --data-dir to keep them)'}`,
        '',
      ].join('\n'),
    )
}

/**
 * Starts the `--evm` node and ties its life to this process: the service stops by exiting (after a
 * drain, on a signal, or on an error), and a process `exit` handler can only signal, not wait.
 */
async function startDevChain(port: number, store: { close(): Promise<void> } | undefined): Promise<EvmNode> {
  try {
    const node = await startEvmNode({
      port,
      anvil: { log: (line) => process.stderr.write(`${NAME}: ${line}\n`) },
    })
    process.once('exit', () => node.kill())
    return node
  } catch (error) {
    await store?.close()
    const message = (error as Error).message
    const hint = /address already in use|Address in use/i.test(message)
      ? ` (port ${port} is taken; pass --evm-port 0 for a free one)`
      : ''
    process.stderr.write(`${NAME}: --evm: ${message}${hint}\n`)
    process.exit(1)
  }
}

/**
 * Starts the `--solana` node (LiteSVM in this process, so it stops with it). On an error the
 * stores and the `--evm` node are closed and the process exits with a one-line reason.
 */
async function startDevSolana(
  port: number,
  store: { close(): Promise<void> } | undefined,
  evm: EvmNode | undefined,
): Promise<SolanaNode> {
  try {
    return await startSolanaNode({ port, log: (line) => process.stderr.write(`${NAME}: ${line}\n`) })
  } catch (error) {
    await store?.close()
    await evm?.close()
    const { code, message } = error as NodeJS.ErrnoException
    const hint = code === 'EADDRINUSE' ? ` (port ${port} is taken; pass --solana-port 0 for a free one)` : ''
    process.stderr.write(`${NAME}: --solana: ${message}${hint}\n`)
    process.exit(1)
  }
}

/** Gives the Solana sponsor DEV_SPONSOR_SOL on the dev node when it holds less; its balance after (lamports). */
function topUpSolana(node: SolanaNode, sponsor: string): bigint {
  const target = BigInt(DEV_SPONSOR_SOL) * LAMPORTS_PER_SOL
  const balance = node.balance(sponsor)
  return balance >= target ? balance : node.airdrop(sponsor, target - balance)
}

/** Lamports as a decimal SOL string without trailing zeros. */
function formatSol(lamports: bigint): string {
  const fraction = (lamports % LAMPORTS_PER_SOL).toString().padStart(9, '0').replace(/0+$/, '')
  return `${lamports / LAMPORTS_PER_SOL}${fraction ? `.${fraction}` : ''}`
}

/**
 * The sponsorship `dev` runs with: \`--sponsorship\`/\`--sponsor-cap\`, the \`--sponsor\` delegates, and
 * with \`--evm\` (unless \`--no-sponsor\`) the delegate deployed on the node's chain; with \`--solana\`
 * (unless \`--no-sponsor\`) a sponsorship even without delegates, since Solana's needs none (its
 * sponsor is the fee payer on every \`solana:\` chain with a node). Undefined: none.
 */
async function devSponsorship(
  options: CliOptions,
  evm: EvmNode | undefined,
): Promise<SponsorshipOptions | undefined> {
  const delegates = { ...options.sponsorship?.delegates, ...options.sponsor }
  if (evm && options.evmSponsor) delegates[DEV_EVM_CHAIN] = await deployDevDelegate(evm)
  if (!options.sponsorship && !options.solanaSponsor && Object.keys(delegates).length === 0) return undefined
  return { ...options.sponsorship, delegates }
}

/**
 * Deploys LatchkeyDelegate on the dev node (CREATE2: a node that has it sends nothing) from a key
 * made for the purpose and funded with \`anvil_setBalance\`, so no dev account's nonce moves.
 */
async function deployDevDelegate(evm: EvmNode): Promise<string> {
  const key = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`
  await fundAccount(evm.rpc, addr.fromPrivateKey(key), 10n ** 18n)
  return deployDelegate(evm.url, key)
}

/** Gives the sponsor account DEV_SPONSOR_ETH on the dev node when it holds less; its balance after. */
async function topUp(evm: EvmNode, sponsor: string): Promise<bigint> {
  const target = BigInt(DEV_SPONSOR_ETH) * 10n ** 18n
  const balance = BigInt((await evm.rpc('eth_getBalance', [sponsor, 'latest'])) as string)
  return balance >= target ? balance : fundAccount(evm.rpc, sponsor, target - balance)
}

/**
 * A database URL as the banner shows it: its credentials, query (`?password=…` logs pg in too)
 * and fragment redacted; a value that is not a URL not shown at all.
 */
function shownDatabaseUrl(url: string): string {
  const shown = redactUrlCredentials(url)
  return shown !== url || URL.canParse(url) ? shown : 'postgres://…'
}
