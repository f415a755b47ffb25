// Child process of endUserDns.test.ts. Runs inside `unshare -m` with /etc/resolv.conf and
// /etc/hosts bind-mounted (in this process's mount namespace only) to endUserDns/resolv.conf
// (`nameserver 127.0.0.1`) and endUserDns/hosts (`receiver.internal` is 127.0.0.1), so every
// lookup of the process, by the system resolver (getaddrinfo: what fetch/undici, pg and net use for
// every host name) or by DNS directly (c-ares reads the system's nameservers), asks the DNS stub
// below, on loopback UDP 53. The stub stands for two authoritative servers:
// - an end user's, for `*.slow.test`: answers after DELAY_MS (under every timeout, so each lookup
//   succeeds and each delivery is delivered: no failure, no back-off, no pause);
// - the operator's SMS provider's, `sms-gateway.test`: answers at once.
// Anything else is NXDOMAIN at once. Bounded: at most 400 questions; the process exits after 45 s
// whatever happens.
// Prints one JSON line: what the endpoints named only in the hosts file got, and how long another
// person's SMS code took to reach the provider before and while one end user's endpoints resolve.
import { createSocket } from 'node:dgram'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { createHarness, resultOf, testKey } from '../../src/testing/harness.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'

const DELAY_MS = 4000
const ENDPOINTS = 10
const SMS_WAIT_MS = 15_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const killer = setTimeout(() => process.exit(3), 45_000)
const until = async (done: () => boolean, ms: number) => {
  const end = Date.now() + ms
  while (!done() && Date.now() < end) await sleep(10)
}

// --- the DNS stub: A 127.0.0.1 (and an empty AAAA) for the two zones, NXDOMAIN for anything else ---
let questions = 0
let slowLookups = 0
const asked: string[] = []
const dns = createSocket('udp4')
dns.on('message', (message, from) => {
  if (questions >= 400 || message.length < 17) return
  questions++
  const labels: string[] = []
  let at = 12
  while (at < message.length && message[at] !== 0) {
    labels.push(message.subarray(at + 1, at + 1 + message[at]!).toString('latin1'))
    at += 1 + message[at]!
  }
  if (at + 5 > message.length) return
  const name = labels.join('.').toLowerCase()
  const type = message.readUInt16BE(at + 1)
  asked.push(name)
  const slow = name.endsWith('.slow.test')
  const known = slow || name === 'sms-gateway.test'
  const header = Buffer.from(message.subarray(0, 12))
  const records: Buffer[] = []
  if (known && type === 1) {
    const record = Buffer.alloc(16)
    record.writeUInt16BE(0xc00c, 0) // the name: a pointer to the question's
    record.writeUInt16BE(1, 2) // A
    record.writeUInt16BE(1, 4) // IN
    record.writeUInt32BE(0, 6) // TTL 0: never cached
    record.writeUInt16BE(4, 10)
    Buffer.from([127, 0, 0, 1]).copy(record, 12)
    records.push(record)
  }
  // QR, AA, RD copied, RA; NXDOMAIN for an unknown name.
  header.writeUInt16BE(0x8400 | (message.readUInt16BE(2) & 0x0100) | 0x0080 | (known ? 0 : 3), 2)
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(records.length, 6)
  header.writeUInt16BE(0, 8)
  header.writeUInt16BE(0, 10)
  const reply = Buffer.concat([header, message.subarray(12, at + 5), ...records])
  if (!slow) return dns.send(reply, from.port, from.address)
  if (type === 1) slowLookups++
  setTimeout(() => dns.send(reply, from.port, from.address), DELAY_MS)
})
await new Promise<void>((resolve) => dns.bind(53, '127.0.0.1', resolve))

// --- the receivers: answer 200 at once, counted by path ---
const received: Record<string, number> = {}
const receiver = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    const path = request.url?.split('/')[1] ?? ''
    received[path] = (received[path] ?? 0) + 1
    response.writeHead(200).end('ok')
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const port = (receiver.address() as AddressInfo).port

// --- the operator's SMS provider (the SMS webhook provider), reached by its name like any provider ---
const smsArrivals: number[] = []
const gateway = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    smsArrivals.push(Date.now())
    response.writeHead(200).end('{}')
  })
})
await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve))
const gatewayUrl = `http://sms-gateway.test:${(gateway.address() as AddressInfo).port}/sms`

// --- the service, its webhooks sent as `start` sends them (the default node transport); the
// operator lets its own receivers on 127.0.0.1 through (`allowList`), outside dev's loopback ---
const failures: string[] = []
const outcomes: { endpointId: string; outcome: string }[] = []
const h = await createHarness({
  webhooks: { transport: nodeWebhookTransport(), busyDelayMs: 0, allowList: ['127.0.0.1/32'] },
  delivery: { sms: { provider: 'webhook', url: gatewayUrl, secret: 'gateway-secret' } },
  jobs: { pollMs: 20 },
  events: {
    emit: (name: string, data: unknown) => {
      if (name === 'delivery.failed') failures.push(JSON.stringify(data))
      if (name === 'webhooks.delivery') outcomes.push(data as { endpointId: string; outcome: string })
    },
  },
})
const ACTIVITY_UPDATES = [{ eventType: 'ACTIVITY_UPDATES' }]

// --- a name only the hosts file knows: the operator's endpoint reaches it, an end user's does not ---
const operatorEndpoint = resultOf(
  'create_webhook_endpoint',
  await h.submit('create_webhook_endpoint', {
    url: `http://receiver.internal:${port}/operator`,
    name: 'operator',
    subscriptions: ACTIVITY_UPDATES,
  }),
).endpointId as string
const endUserKey = testKey()
const endUser = await h.createSubOrganization({ keys: [endUserKey] })
h.clock.advance(1)
const endUserEndpoint = resultOf(
  'create_webhook_endpoint',
  await h.submit(
    'create_webhook_endpoint',
    { url: `http://receiver.internal:${port}/end-user`, name: 'end-user', subscriptions: ACTIVITY_UPDATES },
    { as: endUserKey, organizationId: endUser.organizationId },
  ),
).endpointId as string
h.clock.advance(1)
await h.submit('create_wallet', { walletName: 'operator', accounts: [] })
h.clock.advance(1)
await h.submit(
  'create_wallet',
  { walletName: 'end-user', accounts: [] },
  { as: endUserKey, organizationId: endUser.organizationId },
)
const tried = (endpointId: string) => outcomes.some((entry) => entry.endpointId === endpointId)
await until(() => tried(operatorEndpoint) && tried(endUserEndpoint), 10_000)
const hostsFile = {
  operator: outcomes.filter((entry) => entry.endpointId === operatorEndpoint).map((entry) => entry.outcome),
  endUser: outcomes.filter((entry) => entry.endpointId === endUserEndpoint).map((entry) => entry.outcome),
  endUserAsked: asked.includes('receiver.internal'),
}

// Another person's sign-in code by SMS: how long from the ask until the provider has it.
let phone = 0
const codeDelay = async () => {
  // The provider's last connection is gone (as after its keep-alive): this code needs a new one.
  gateway.closeIdleConnections()
  await sleep(100)
  const count = smsArrivals.length
  const askedAt = Date.now()
  const init = await h.service.app.request('/v1/otp_init', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId! },
    body: JSON.stringify({
      otpType: 'OTP_TYPE_SMS',
      contact: `+1415555${String(100 + phone++).padStart(4, '0')}`,
    }),
  })
  if (init.status !== 200) throw new Error(`otp_init ${init.status} ${await init.text()}`)
  await until(() => smsArrivals.length > count, SMS_WAIT_MS)
  return (smsArrivals[count] ?? Date.now()) - askedAt
}
const smsBefore = [await codeDelay(), await codeDelay()]

// The attacker: an end user (any sign-up) with its 10 endpoints at names its own DNS answers slowly,
// fed by a few of its own cheap activities (one event per endpoint each).
const attackerKey = testKey()
const attacker = await h.createSubOrganization({ keys: [attackerKey] })
const as = { as: attackerKey, organizationId: attacker.organizationId }
for (let i = 0; i < ENDPOINTS; i++) {
  h.clock.advance(1)
  resultOf(
    'create_webhook_endpoint',
    await h.submit(
      'create_webhook_endpoint',
      { url: `http://e${i}.slow.test:${port}/attacker`, name: `e${i}`, subscriptions: ACTIVITY_UPDATES },
      as,
    ),
  )
}
for (let i = 0; i < 3; i++) {
  h.clock.advance(1)
  await h.submit('create_wallet', { walletName: `w${i}`, accounts: [] }, as)
}
// Once the senders have been resolving for a while, the person asks for a code.
await until(() => slowLookups >= 4, 15_000)
await sleep(DELAY_MS + 500)
const failuresBefore = failures.length
const smsDuring = [await codeDelay()]
// The end user's slow names still resolve (DNS asked directly, at the system's nameservers).
await until(() => (received.attacker ?? 0) > 0, 2 * DELAY_MS)
console.log(
  JSON.stringify({
    hostsFile,
    smsBefore,
    smsDuring,
    smsFailuresDuring: failures.slice(failuresBefore),
    attackerDeliveries: received.attacker ?? 0,
    slowLookups,
    questions,
  }),
)
clearTimeout(killer)
await h.service.close()
for (const server of [receiver, gateway]) {
  server.closeAllConnections()
  server.close()
}
dns.close()
process.exit(0)
