// The pieces `npm start` and the e2e runner both start: a local EVM node (anvil, a child
// process), the local Latchkey service (its CLI, run through tsx as a child process) and the
// playground (Vite). Each start function returns a handle with `close()`; callers own the
// order of shutdown.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer as createNetServer } from 'node:net'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * Resolves to `preferred` when that port is free on 127.0.0.1, else to a free port below the
 * kernel's ephemeral range (or, failing that, one the OS picks). A port is chosen before the
 * server that will bind it starts (services are told the playground's origin first), and the OS
 * hands out ephemeral ports to every outgoing connection and every listen on port 0 meanwhile: a
 * port from that range was taken so in one CI run ("Port 42483 is already in use"). Below the
 * range only a server that asks for that very port can take it.
 */
export async function freePort(preferred = 0) {
  const tryListen = (port) =>
    new Promise((resolve) => {
      const server = createNetServer()
      server.unref()
      server.once('error', () => resolve(undefined))
      server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
        const { port: chosen } = server.address()
        server.close(() => resolve(chosen))
      })
    })
  if (preferred && (await tryListen(preferred))) return preferred
  const ephemeralLow = lowestEphemeralPort()
  for (let attempt = 0; attempt < 20 && ephemeralLow > 11_000; attempt++) {
    const port = await tryListen(10_000 + Math.floor(Math.random() * (ephemeralLow - 10_000)))
    if (port) return port
  }
  return await tryListen(0)
}

/** The first port the kernel picks from on its own (Linux's default where /proc does not say). */
function lowestEphemeralPort() {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    if (low > 0) return low
  } catch {
    // Not Linux: its default range.
  }
  return 32_768
}

// The EVM node (anvil from scripts/anvil: Prague rules, instant mining, ten unlocked funded
// accounts of the standard dev mnemonic) and the JSON-RPC helper live in evmNode.mjs so tests can
// use them too.
export { jsonRpc, startEvmNode } from './evmNode.mjs'

/** The first key of anvil's well-known dev mnemonic (public test key, funded on every local node). */
const ANVIL_KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'

/**
 * Deploys the LatchkeyDelegate (the EIP-7702 delegate sponsored sends run through) on the local
 * node and returns the `--sponsor` argument for the service. CREATE2 at a fixed address: a second
 * call sends nothing.
 */
export async function sponsorArgs(evm) {
  const { tsImport } = await import('tsx/esm/api')
  const { deployDelegate } = await tsImport(
    '../packages/service/src/sending/delegate/index.ts',
    import.meta.url,
  )
  const delegate = await deployDelegate(evm.url, ANVIL_KEY_0)
  return ['--sponsor', `${evm.caip2}=${delegate}`]
}

/** Gives a started service's sponsor account 100 ETH on the local node, so it can pay for sends. */
export async function fundSponsor(evm, service) {
  if (!service.sponsorAddress) return
  const { jsonRpc } = await import('./evmNode.mjs')
  await jsonRpc(evm.url, 'anvil_setBalance', [service.sponsorAddress, `0x${(10n ** 20n).toString(16)}`])
}

/**
 * How long a service may take to print its `--json` line: 180 s, or `LATCHKEY_DEVSTACK_TIMEOUT_MS`
 * (a loaded CI machine starting several services at once may need more).
 */
export function startTimeoutMs(env = process.env) {
  const text = env.LATCHKEY_DEVSTACK_TIMEOUT_MS
  if (text === undefined || text === '') return 180_000
  const ms = Number(text)
  if (!Number.isInteger(ms) || ms <= 0)
    throw new Error(
      `LATCHKEY_DEVSTACK_TIMEOUT_MS must be a whole number of milliseconds, got ${JSON.stringify(text)}`,
    )
  return ms
}

/** The service's CLI from its sources through tsx (no build needed): what follows `node`. */
export const SOURCE_CLI = ['--import', 'tsx', 'packages/service/src/cli.ts']

/**
 * Starts the local service CLI (`cli`: by default `packages/service/src/cli.ts` through tsx, no build
 * needed) and resolves with the dev credentials from its first stdout line (`--json`). Later output
 * goes to `log`.
 */
export async function startService({
  dataDir,
  port = 0,
  args = [],
  log = (line) => process.stderr.write(line + '\n'),
  timeoutMs = startTimeoutMs(),
  cli = SOURCE_CLI,
}) {
  const cliArgs = [...cli, 'dev', '--port', String(port), '--json', ...args]
  if (dataDir) cliArgs.push('--data-dir', dataDir)
  const child = spawn(process.execPath, cliArgs, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'development' },
  })
  const stderrLines = []
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderrLines.push(line)
    if (stderrLines.length > 50) stderrLines.shift()
    log(`[service] ${line}`)
  })
  const lines = createInterface({ input: child.stdout })
  const info = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(
        new Error(
          `the service printed no --json line within ${timeoutMs} ms (LATCHKEY_DEVSTACK_TIMEOUT_MS sets it)\n${stderrLines.join('\n')}`,
        ),
      )
    }, timeoutMs)
    const onExit = (code, signal) => {
      clearTimeout(timer)
      reject(
        new Error(`the service exited (${signal ?? code}) before it was ready\n${stderrLines.join('\n')}`),
      )
    }
    child.once('exit', onExit)
    lines.once('line', (line) => {
      clearTimeout(timer)
      child.off('exit', onExit)
      try {
        resolve(JSON.parse(line))
      } catch {
        reject(new Error(`the service's first stdout line is not JSON: ${line}`))
      }
    })
  })
  lines.on('line', (line) => log(`[service] ${line}`))
  return {
    ...info,
    child,
    async close() {
      await stopChild(child)
    },
  }
}

/** SIGTERM, then SIGKILL after `graceMs` if the child is still running. */
export async function stopChild(child, graceMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

/**
 * What the playground reads at run time from `/playground-config.json` (served by the
 * playground's Vite plugin from `LATCHKEY_PLAYGROUND_CONFIG`). `services` maps a name to one
 * local service; the playground uses `default` unless the page is opened with `?service=<name>`.
 * `clientOptions` adds `createLatchkey` options per service name.
 */
export function playgroundConfig({ services, evm, clientOptions = {} }) {
  const entries = Object.entries(services).map(([name, service]) => [
    name,
    {
      // Extra `createLatchkey` options for this service (e.g. session timing for short sessions).
      ...(clientOptions[name] ? { client: clientOptions[name] } : {}),
      baseUrl: service.baseUrl,
      authProxyUrl: service.authProxyUrl,
      organizationId: service.organizationId,
      authProxyConfigId: service.authProxyConfigId,
      trustedSignerPublicKey: service.trustedSignerPublicKey,
      outboxUrl: service.outboxUrl,
      apiPublicKey: service.apiPublicKey,
      apiPrivateKey: service.apiPrivateKey,
    },
  ])
  return {
    services: Object.fromEntries(entries),
    evm: evm
      ? { rpcUrl: evm.url, chainId: evm.chainId, caip2: evm.caip2, faucetAccount: evm.accounts[0] }
      : null,
  }
}

/** Starts the playground with Vite: the dev server (`mode: 'dev'`) or a built preview (`'preview'`). */
export async function startPlayground({
  config,
  port,
  host = '127.0.0.1',
  mode = 'dev',
  strictPort = false,
  outDir,
}) {
  process.env.LATCHKEY_PLAYGROUND_CONFIG = JSON.stringify(config)
  const vite = await import('vite')
  const configFile = path.join(root, 'playground/vite.config.ts')
  if (mode === 'dev') {
    const server = await vite.createServer({
      configFile,
      logLevel: 'warn',
      server: { port, host, strictPort },
    })
    await server.listen()
    const address = server.httpServer.address()
    return { url: `http://localhost:${address.port}`, port: address.port, close: () => server.close() }
  }
  await vite.build({ configFile, logLevel: 'warn', build: outDir ? { outDir } : {} })
  const server = await vite.preview({
    configFile,
    logLevel: 'warn',
    preview: { port, host, strictPort },
    build: outDir ? { outDir } : {},
  })
  const address = server.httpServer.address()
  return {
    url: `http://localhost:${address.port}`,
    port: address.port,
    close: () => new Promise((resolve) => server.httpServer.close(() => resolve())),
  }
}
