// `npm run test:e2e`: makes sure Debian's Chromium is there, starts a local EVM node, the local
// services the specs need and the built playground on free ports, runs Playwright, tears it all
// down and exits with Playwright's status. Extra arguments go to `playwright test`.
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { appendFile } from 'node:fs/promises'
import path from 'node:path'
import {
  freePort,
  fundSponsor,
  playgroundConfig,
  root,
  sponsorArgs,
  startEvmNode,
  startPlayground,
  startService,
  stopChild,
} from './devStack.mjs'

const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`
const step = (text) => process.stderr.write(`[e2e ${elapsed()}] ${text}\n`)

const runDir = path.join(root, 'test-results', '.stack')
rmSync(runDir, { recursive: true, force: true })
mkdirSync(runDir, { recursive: true })
const serviceLog = (name) => {
  const file = path.join(runDir, `service-${name}.log`)
  return (line) => {
    appendFile(file, line + '\n').catch(() => {})
  }
}

const handles = []
let exitCode = 1
try {
  step('checking for /usr/bin/chromium')
  execFileSync('bash', [path.join(root, 'scripts/ensure-chromium.sh')], { stdio: 'inherit' })

  step('starting the EVM node, the local services and the playground')
  const evm = await startEvmNode({ chainId: 31337 })
  handles.push(evm)
  const playgroundPort = await freePort()
  // The playground is opened at http://localhost:<port>; its 127.0.0.1 twin is a different
  // origin that the default service refuses (the disallowed-origin spec).
  const playgroundOrigin = `http://localhost:${playgroundPort}`
  const rpc = ['--rpc', `${evm.caip2}=${evm.url}`, ...(await sponsorArgs(evm))]
  // The page of e2e/published-clients.spec.ts (the published @turnkey/* clients, built and served
  // by the spec on this port) is its own origin, allowed only by the `published` service.
  const publishedClientsPort = await freePort()
  const publishedClientsOrigin = `http://localhost:${publishedClientsPort}`
  const serviceSpecs = {
    // Most specs; only the playground's own origin is allowed.
    default: [...rpc, '--allowed-origins', playgroundOrigin],
    // Short sessions, for expiry and refresh.
    short: [...rpc, '--allowed-origins', playgroundOrigin, '--session-seconds', '20'],
    // 5 s sessions, for the expired state (e2e/session-expiry.spec.ts).
    brief: [...rpc, '--allowed-origins', playgroundOrigin, '--session-seconds', '5'],
    // The operator spec changes settings here, so no other spec sees its changes.
    operator: [...rpc, '--allowed-origins', playgroundOrigin],
    published: [...rpc, '--allowed-origins', publishedClientsOrigin],
  }
  // The CLI bundled from the sources by esbuild, as the service's own tests run it
  // (packages/service/test/support/cliEntry.ts; LATCHKEY_TEST_CLI=tsx runs the sources through tsx):
  // five services starting at once through tsx each resolved and loaded ~300 modules through its
  // hooks, in the process and in each crypto worker thread, which took most of a minute on 2 cores.
  const { tsImport } = await import('tsx/esm/api')
  const { cliCommand } = await tsImport('../packages/service/test/support/cliEntry.ts', import.meta.url)
  const cli = cliCommand()
  const services = Object.fromEntries(
    await Promise.all(
      Object.entries(serviceSpecs).map(async ([name, args]) => {
        const dataDir = path.join(runDir, `data-${name}`)
        const service = await startService({ dataDir, args, log: serviceLog(name), cli })
        handles.push(service)
        await fundSponsor(evm, service)
        return [name, service]
      }),
    ),
  )
  const playground = await startPlayground({
    config: playgroundConfig({
      services,
      evm,
      // 20 s sessions: warn 10 s before the end and leave refreshing to the person, so the spec
      // sees both a manual refresh and a real expiry.
      // 5 s sessions are left to expire (as on a laptop that slept through the renewal).
      clientOptions: {
        short: { session: { autoRefresh: false, warningLeadMs: 10_000 } },
        brief: { session: { autoRefresh: false, warningLeadMs: 2_000 } },
      },
    }),
    port: playgroundPort,
    strictPort: true,
    mode: 'preview',
  })
  handles.push(playground)
  step(`playground ${playground.url}`)

  const stack = {
    playgroundUrl: playground.url,
    foreignPlaygroundUrl: `http://127.0.0.1:${playgroundPort}`,
    publishedClients: { port: publishedClientsPort, origin: publishedClientsOrigin },
    evm: { url: evm.url, chainId: evm.chainId, caip2: evm.caip2 },
    services: Object.fromEntries(
      Object.entries(services).map(([name, s]) => [
        name,
        {
          baseUrl: s.baseUrl,
          authProxyUrl: s.authProxyUrl,
          organizationId: s.organizationId,
          authProxyConfigId: s.authProxyConfigId,
          apiPublicKey: s.apiPublicKey,
          apiPrivateKey: s.apiPrivateKey,
        },
      ]),
    ),
  }

  step('running Playwright')
  const playwright = spawn(
    process.execPath,
    [
      path.join(root, 'node_modules/@playwright/test/cli.js'),
      'test',
      '-c',
      'e2e/playwright.config.ts',
      ...process.argv.slice(2),
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, LATCHKEY_E2E_STACK: JSON.stringify(stack) } },
  )
  const forward = (signal) => playwright.kill(signal)
  process.on('SIGINT', forward)
  process.on('SIGTERM', forward)
  exitCode = await new Promise((resolve) => playwright.once('exit', (code) => resolve(code ?? 1)))
  process.off('SIGINT', forward)
  process.off('SIGTERM', forward)
} catch (error) {
  process.stderr.write(`e2e: ${error.stack ?? error.message}\n`)
  exitCode = 1
} finally {
  step('stopping')
  for (const handle of handles.reverse()) {
    try {
      if (handle.child) await stopChild(handle.child)
      else await handle.close()
    } catch (error) {
      process.stderr.write(`e2e: while stopping: ${error.message}\n`)
    }
  }
  step(`done, exit ${exitCode}`)
  process.exit(exitCode)
}
