/**
 * The local service's speed through its API (in-process `app.request`, stamped requests):
 * signatures per second vs raw library signing, wallet creation time, and latency under 50
 * concurrent clients. Prints figures; not a test. Run: npx tsx bench/service.ts
 */
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { ACTIVITIES, type AccountSpec } from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { createService } from '../packages/service/src/createService.ts'
import { signApiKeyStamp, signRawPayload } from '../packages/service/src/crypto/index.ts'

const ETH: AccountSpec = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
}

const service = createService()
const dev = service.dev
const privateKey = hexToBytes(dev.apiPrivateKey)
let tick = Date.now()

/** A stamped request, built before timing starts (stamping is the client's cost). */
function prepare(
  path: keyof typeof ACTIVITIES,
  parameters: object,
  baseUrl?: string,
): () => Promise<Response> {
  const body = JSON.stringify({
    type: ACTIVITIES[path].type,
    timestampMs: String(tick++),
    organizationId: dev.organizationId,
    parameters,
  })
  const stamp = signApiKeyStamp(body, { scheme: 'SIGNATURE_SCHEME_TK_API_P256', privateKey })
  const init = { method: 'POST', body, headers: { 'X-Stamp': stamp } }
  if (baseUrl) return () => fetch(`${baseUrl}/public/v1/submit/${path}`, init)
  return () => Promise.resolve(service.app.request(`/public/v1/submit/${path}`, init))
}

async function ok(response: Response) {
  if (response.status !== 200) throw new Error(`${response.status} ${await response.text()}`)
  return (await response.json()) as { activity: { result: Record<string, Record<string, unknown>> } }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const fmt = (n: number, digits = 1) => n.toFixed(digits)

// Wallet creation (new mnemonic, BIP-39 seed, one derived account, sealing).
const walletTimes: number[] = []
let address = ''
for (let i = 0; i < 30; i++) {
  const send = prepare('create_wallet', { walletName: `Bench ${i}`, accounts: [ETH] })
  const start = performance.now()
  const reply = await ok(await send())
  walletTimes.push(performance.now() - start)
  address = (reply.activity.result.createWalletResult!.addresses as string[])[0]!
}
walletTimes.sort((a, b) => a - b)

const signParams = (payload: string) => ({
  signWith: address,
  payloads: [payload],
  encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
  hashFunction: 'HASH_FUNCTION_KECCAK256',
})
const payloadOf = (i: number) => `0x${i.toString(16).padStart(64, '0')}`

// Raw library signing with the same key type.
const rawKey = hexToBytes('11'.repeat(32))
const RAW = 3000
let start = performance.now()
for (let i = 0; i < RAW; i++)
  signRawPayload({
    curve: 'CURVE_SECP256K1',
    privateKey: rawKey,
    payload: payloadOf(i),
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_KECCAK256',
  })
const rawPerSecond = (RAW * 1000) / (performance.now() - start)

// Sequential signatures through the API.
const API = 1000
const requests = Array.from({ length: API }, (_, i) => prepare('sign_raw_payloads', signParams(payloadOf(i))))
start = performance.now()
for (const send of requests) await ok(await send())
const apiPerSecond = (API * 1000) / (performance.now() - start)

// 50 concurrent clients, 20 requests each.
const CLIENTS = 50
const EACH = 20
const batches = Array.from({ length: CLIENTS }, (_, c) =>
  Array.from({ length: EACH }, (_, i) =>
    prepare('sign_raw_payloads', signParams(payloadOf(100_000 + c * EACH + i))),
  ),
)
const latencies: number[] = []
start = performance.now()
await Promise.all(
  batches.map(async (batch) => {
    for (const send of batch) {
      const begin = performance.now()
      await ok(await send())
      latencies.push(performance.now() - begin)
    }
  }),
)
const concurrentSeconds = (performance.now() - start) / 1000
latencies.sort((a, b) => a - b)

// The same over loopback HTTP (@hono/node-server, as the CLI serves it).
const server = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' })
await new Promise((resolve) => server.once('listening', resolve))
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const httpBatches = Array.from({ length: CLIENTS }, (_, c) =>
  Array.from({ length: EACH }, (_, i) =>
    prepare('sign_raw_payloads', signParams(payloadOf(200_000 + c * EACH + i)), baseUrl),
  ),
)
const httpLatencies: number[] = []
start = performance.now()
await Promise.all(
  httpBatches.map(async (batch) => {
    for (const send of batch) {
      const begin = performance.now()
      await ok(await send())
      httpLatencies.push(performance.now() - begin)
    }
  }),
)
const httpSeconds = (performance.now() - start) / 1000
httpLatencies.sort((a, b) => a - b)
server.close()

console.log('Latchkey local service, in-process (app.request), stamped P-256 requests, node', process.version)
console.log(`raw signRawPayload (secp256k1, keccak256)      ${fmt(rawPerSecond, 0).padStart(8)} sig/s`)
console.log(
  `sign_raw_payloads through the API, sequential  ${fmt(apiPerSecond, 0).padStart(8)} sig/s   (ratio API/raw ${fmt(apiPerSecond / rawPerSecond, 2)})`,
)
console.log(
  `create_wallet (12 words + 1 ETH account)       p50 ${fmt(percentile(walletTimes, 50))} ms   p99 ${fmt(percentile(walletTimes, 99))} ms   mean ${fmt(walletTimes.reduce((a, b) => a + b, 0) / walletTimes.length)} ms`,
)
console.log(
  `${CLIENTS} concurrent clients x ${EACH} signatures          p50 ${fmt(percentile(latencies, 50))} ms   p99 ${fmt(percentile(latencies, 99))} ms   ${fmt((CLIENTS * EACH) / concurrentSeconds, 0)} sig/s`,
)
console.log(
  `${CLIENTS} concurrent clients x ${EACH}, loopback HTTP       p50 ${fmt(percentile(httpLatencies, 50))} ms   p99 ${fmt(percentile(httpLatencies, 99))} ms   ${fmt((CLIENTS * EACH) / httpSeconds, 0)} sig/s`,
)
