// Memory of the local service under an unauthenticated flood of its sign-in surfaces:
// 4 x 300 dev-IdP posts with a 150 KB client_id, 1,200 authorize codes with long parameters and
// 1,200 otp_init from one client address, in process (app.request), 50 in flight. Prints the
// heap retained after a full GC and the RSS growth of a second flood over the first. The abuse
// suite (packages/service/src/security/abuse.test.ts) runs the same flood with bounds.
// Run: npm run bench:flood

import { pathToFileURL } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { createService, type Service } from '../packages/service/src/assembly/createService.ts'
import { s256Challenge } from '../packages/service/src/signin/oauth/pkce.ts'
import { signInState } from '../packages/service/src/signin/signInState.ts'

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' }
const BIG = 'c'.repeat(150 * 1024)

/**
 * One flood (4 rounds of 300, 50 in flight): each step posts a 150 KB client_id and a valid
 * authorize form with long parameters to the dev IdP, and an otp_init for a new contact from
 * one remote address. Counts every answer's status into `statuses`.
 */
export async function floodSignIn(
  service: Service,
  tag: string,
  statuses: Map<number, number>,
): Promise<void> {
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
  const { app } = service
  for (let round = 0; round < 4; round++)
    for (let batch = 0; batch < 300; batch += 50)
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          const contact = `${tag}${round}-${batch + j}@example.com`
          const huge = await app.request('/dev/oidc/google/authorize', {
            method: 'POST',
            headers: FORM,
            body: `response_type=code&client_id=${BIG}&redirect_uri=http://x.test/&code_challenge_method=S256`,
          })
          count(huge.status)
          const small = await app.request('/dev/oidc/google/authorize', {
            method: 'POST',
            headers: FORM,
            body: new URLSearchParams({
              response_type: 'code',
              client_id: `c${'x'.repeat(500)}`,
              redirect_uri: `http://localhost/${'p'.repeat(2000)}`,
              code_challenge: s256Challenge('v'.repeat(50)),
              code_challenge_method: 'S256',
              state: 's'.repeat(1000),
              email: contact,
            }).toString(),
          })
          count(small.status)
          const otp = await app.request(
            '/v1/otp_init',
            {
              method: 'POST',
              headers: {
                'Content-Type': 'application/json',
                [PROXY_CONFIG_HEADER]: service.dev.authProxyConfigId!,
              },
              body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact }),
            },
            { incoming: { socket: { remoteAddress: '203.0.113.50' } } },
          )
          count(otp.status)
        }),
      )
}

/** A full GC, then the process's memory use. */
function afterGc(): NodeJS.MemoryUsage {
  v8.setFlagsFromString('--expose-gc')
  ;(vm.runInNewContext('gc') as () => void)()
  return process.memoryUsage()
}

/** Heap + buffers still reachable after a full GC. */
export function retainedBytes(): number {
  const usage = afterGc()
  return usage.heapUsed + usage.external + usage.arrayBuffers
}

/**
 * JavaScript objects still reachable after a full GC. Buffers are left out: they include the
 * embedded database's WebAssembly memory, which grows in large steps and never shrinks, so its
 * growth says nothing about what the service retains (rows are bounded by their own counts).
 */
export function retainedHeapBytes(): number {
  return afterGc().heapUsed
}

async function main() {
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
  const service = await createService()
  const statuses = new Map<number, number>()
  const heap0 = retainedBytes()
  const rss0 = process.memoryUsage().rss
  let started = performance.now()
  await floodSignIn(service, 'a', statuses)
  const first = performance.now() - started
  const heap1 = retainedBytes()
  const rss1 = process.memoryUsage().rss
  started = performance.now()
  await floodSignIn(service, 'b', statuses)
  const second = performance.now() - started
  const heap2 = retainedBytes()
  const rss2 = process.memoryUsage().rss

  console.log('sign-in flood (in process, 3,600 requests per flood)')
  console.log(
    `  first flood   ${first.toFixed(0)} ms, retained heap +${mb(heap1 - heap0)}, RSS +${mb(rss1 - rss0)}`,
  )
  console.log(
    `  second flood  ${second.toFixed(0)} ms, retained heap +${mb(heap2 - heap1)}, RSS +${mb(rss2 - rss1)}`,
  )
  console.log(`  requests/s    ${((7200 / (first + second)) * 1000).toFixed(0)}`)
  console.log(`  statuses      ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}`)
  console.log(
    `  kept          ${(await signInState(service.runtime)).devIdp.pendingCodes()} IdP codes (cap 1000), ${(await service.store.findBy('pluginRows', 'kind', 'otp')).length} OTP records, ${(await service.store.findBy('pluginRows', 'kind', 'otp-limit')).length} rate buckets`,
  )
  if ([...statuses.keys()].some((s) => s >= 500)) process.exitCode = 1
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
