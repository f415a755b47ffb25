// `npm start`: a local EVM node, the local Latchkey service (durable data in .latchkey/) and the
// playground, then one URL to open. Ctrl-C stops all three.
import {
  freePort,
  fundSponsor,
  playgroundConfig,
  sponsorArgs,
  startEvmNode,
  startPlayground,
  startService,
} from './devStack.mjs'
import { serviceLogFilter } from './serviceLog.mjs'

const verbose = process.argv.includes('--verbose')
const log = verbose ? (line) => process.stderr.write(line + '\n') : () => {}
const step = (text) => process.stderr.write(`\x1b[2m• ${text}\x1b[0m\n`)

const handles = []
let stopping = false

async function stopAll(code) {
  if (stopping) return
  stopping = true
  for (const handle of handles.reverse()) {
    try {
      await handle.close()
    } catch (error) {
      process.stderr.write(`while stopping: ${error.message}\n`)
    }
  }
  process.exit(code)
}

process.on('SIGINT', () => stopAll(0))
process.on('SIGTERM', () => stopAll(0))

try {
  step('starting a local EVM node (anvil, chain id 31337)')
  const evm = await startEvmNode({ port: await freePort(8545), chainId: 31337 })
  handles.push(evm)

  step('starting the local Latchkey service (data in .latchkey/)')
  const service = await startService({
    dataDir: '.latchkey',
    port: await freePort(8787),
    // Sends on the node, and sponsored ones through the delegate deployed on it.
    args: ['--rpc', `${evm.caip2}=${evm.url}`, ...(await sponsorArgs(evm))],
    // Its warnings and errors by their level (--verbose: everything), not every line with "error" in it.
    log: (() => {
      const worthShowing = serviceLogFilter()
      return (line) => {
        const show = worthShowing(line.replace(/^\[service\] /, ''))
        if (verbose || show) process.stderr.write(line + '\n')
      }
    })(),
  })
  handles.push(service)
  await fundSponsor(evm, service)
  service.child.once('exit', (code, signal) => {
    if (stopping) return
    process.stderr.write(`the service stopped unexpectedly (${signal ?? code})\n`)
    stopAll(1)
  })

  step('starting the playground (Vite)')
  const playground = await startPlayground({
    config: playgroundConfig({ services: { default: service }, evm }),
    port: await freePort(5173),
  })
  handles.push(playground)
  log(`service: ${service.baseUrl}  auth proxy: ${service.authProxyUrl}  evm: ${evm.url}`)

  process.stdout.write(`\n  Latchkey playground  \x1b[1m\x1b[36m${playground.url}\x1b[0m\n`)
  process.stdout.write(`\x1b[2m  outbox (OTP codes)   ${service.outboxUrl}\x1b[0m\n\n`)
  process.stderr.write('\x1b[2m  (Ctrl-C to stop; --verbose shows the service log)\x1b[0m\n')
} catch (error) {
  process.stderr.write(`npm start failed: ${error.message}\n`)
  await stopAll(1)
}
