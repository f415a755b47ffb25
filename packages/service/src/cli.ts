// Node only: `npm run service -- …` and `latchkey dev …`. Starts the local service on a port.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { createService } from './createService.ts'
import { type CliOptions, parseCli, USAGE, UsageError } from './parseCli.ts'
import { fileBackend, loadMasterKey } from './store/fileBackend.ts'

async function main(): Promise<void> {
  let options: CliOptions | 'help'
  try {
    options = parseCli(process.argv.slice(2))
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    process.stderr.write(`latchkey dev: ${error.message}\n\n${USAGE}\n`)
    process.exit(2)
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const service = createService({
    ...(options.dataDir
      ? { store: fileBackend(options.dataDir), masterKey: loadMasterKey(options.dataDir) }
      : {}),
    rpc: options.rpc,
    ...(options.rpId ? { webauthn: { rpId: options.rpId } } : {}),
    proxySettings: {
      ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
      ...(options.providers ? { enabledProviders: options.providers } : {}),
      ...(options.sessionSeconds ? { sessionExpirationSeconds: options.sessionSeconds } : {}),
    },
  })
  const server = serve({ fetch: service.app.fetch, port: options.port, hostname: options.host })
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  }).catch((error: Error) => {
    process.stderr.write(`latchkey dev: cannot listen on ${options.host}:${options.port}: ${error.message}\n`)
    process.exit(1)
  })
  const { port } = server.address() as AddressInfo
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  const dev = service.dev
  const info = {
    baseUrl,
    authProxyUrl: baseUrl,
    organizationId: dev.organizationId,
    authProxyConfigId: dev.authProxyConfigId ?? null,
    apiPublicKey: dev.apiPublicKey,
    apiPrivateKey: dev.apiPrivateKey,
    signerPublicKey: dev.signerPublicKey,
  }
  if (options.json) process.stdout.write(`${JSON.stringify(info)}\n`)
  else
    process.stdout.write(
      [
        `Latchkey local service on ${baseUrl}`,
        `  activity API   ${baseUrl}/public/v1`,
        `  auth proxy     ${baseUrl}/v1 (config ${info.authProxyConfigId ?? 'none'})`,
        `  organization   ${info.organizationId}`,
        `  dev API key    ${info.apiPublicKey}`,
        `  private key    ${info.apiPrivateKey}   (dev credentials: never use them for real funds)`,
        `  bundle signer  ${info.signerPublicKey}`,
        `  data           ${options.dataDir ?? 'in memory (lost on exit)'}`,
        '',
      ].join('\n'),
    )
  const stop = () => {
    server.close()
    service.close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

main().catch((error: Error) => {
  process.stderr.write(`latchkey dev: ${error.message}\n`)
  process.exit(1)
})
