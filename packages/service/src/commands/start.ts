// Node only: `latchkey-service start --config FILE`: the service in production. It runs only on a
// configuration that is safe (see config/productionRefusals.ts), serves the parent organization
// `init` made, mounts no dev surface and prints nothing secret.
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { type ServerType, serve } from '@hono/node-server'
import { ConfigError } from '../config/ConfigError.ts'
import { FLAG_KEYS, loadConfig } from '../config/loadConfig.ts'
import { describeStorage, productionService } from '../config/productionService.ts'
import { trustProxies } from '../config/trustedProxies.ts'
import type { Service } from '../createService.ts'
import { exitWithProblems } from './config.ts'

const NAME = 'latchkey-service'

export const START_USAGE = `Usage: latchkey-service start --config FILE [options]

Runs the service in production: auth proxy at <url>/v1, activity API at <url>/public/v1, no
development surface. Refuses to run without durable storage, without an explicit master key, with
"*" in proxy.allowed_origins or with a development sign-in method; run \`latchkey-service init\`
once first. The configuration reference is docs/configuration.md.

  --config <file>        the TOML configuration (default: env LATCHKEY_CONFIG)
  --host <name>          server.host
  --port <n>             server.port
  --data-dir <dir>       storage.data_dir
  --database-url <url>   storage.database_url (better: LATCHKEY_DATABASE_URL, not visible in ps)
  --json                 print one JSON line (URLs and ids) once listening
  --help                 show this help`

/**
 * Listens on `host:port` with the app behind the configured proxies. One function so the server
 * (admin listener, draining on SIGTERM) can be swapped in whole.
 */
async function listen(
  service: Service,
  host: string,
  port: number,
  trustedProxies: string[],
): Promise<ServerType> {
  const server = serve({ fetch: trustProxies(service.app.fetch, trustedProxies), port, hostname: host })
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const stop = async () => {
    server.close()
    await service.close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  return server
}

export async function run(argv: string[]): Promise<void> {
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        'database-url': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values
  } catch (error) {
    process.stderr.write(`${NAME}: ${(error as Error).message}\n\n${START_USAGE}\n`)
    process.exit(2)
  }
  if (values.help) {
    process.stdout.write(`${START_USAGE}\n`)
    return
  }
  let service: Service
  let loaded: ReturnType<typeof loadConfig>
  try {
    loaded = loadConfig({
      file: (values.config as string | undefined) ?? (process.env.LATCHKEY_CONFIG || undefined),
      flags: Object.fromEntries(
        Object.entries(FLAG_KEYS).map(([flag, key]) => [key, values[flag] as string | undefined]),
      ),
    })
    // A file-system or database outage answers 503 and is recovered from; a crash must not follow.
    process.on('SIGXFSZ', () => undefined)
    service = await productionService(loaded.config, { workers: true })
  } catch (error) {
    if (error instanceof ConfigError) exitWithProblems(error.problems)
    throw error
  }
  const { config } = loaded
  const row = service.runtime.serviceRow
  if (row.parentOrganizationId === undefined) {
    await service.close()
    exitWithProblems([
      `no parent organization in ${describeStorage(config)}: run \`latchkey-service init --config FILE --root-public-key HEX\` once first`,
    ])
  }
  const { host, port, trusted_proxies: trustedProxies, public_url: publicUrl } = config.server
  const server = await listen(service, host, port, trustedProxies).catch(
    async (error: NodeJS.ErrnoException) => {
      const hint =
        error.code === 'EADDRINUSE' ? `port ${port} is already in use (server.port)` : error.message
      process.stderr.write(`${NAME}: cannot listen on ${host}:${port}: ${hint}\n`)
      await service.close()
      process.exit(1)
    },
  )
  const address = server.address() as AddressInfo
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  const listening = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}`
  const info = {
    baseUrl: publicUrl ?? listening,
    listening,
    organizationId: row.parentOrganizationId,
    authProxyConfigId: row.authProxyConfigId ?? null,
    trustedSignerPublicKey: row.signerPublicKey,
  }
  if (values.json) process.stdout.write(`${JSON.stringify(info)}\n`)
  else
    process.stdout.write(
      [
        `Latchkey service (production) listening on ${listening}`,
        `  public URL              ${info.baseUrl}`,
        `  activity API            ${info.baseUrl}/public/v1`,
        `  auth proxy              ${info.baseUrl}/v1`,
        `  organizationId          ${info.organizationId}`,
        `  authProxyConfigId       ${info.authProxyConfigId ?? 'none'}`,
        `  trustedSignerPublicKey  ${info.trustedSignerPublicKey}`,
        `  data                    ${describeStorage(config)}`,
        `  trusted proxies         ${trustedProxies.length > 0 ? trustedProxies.join(', ') : 'none (X-Forwarded-* and Forwarded are ignored)'}`,
        '',
      ].join('\n'),
    )
}
