// Memory of the local service under an unauthenticated flood of its sign-in surfaces (issue 13):
// 4 x 300 dev-IdP posts with a 150 KB client_id, 1,200 authorize codes with long parameters and
// 1,200 otp_init from one client address, in process (app.request), 50 in flight. Prints the
// heap retained after a full GC and the RSS growth of a second flood over the first.
// Run: npx tsx bench/signinFlood.ts
import v8 from 'node:v8'
import vm from 'node:vm'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { createService } from '../packages/service/src/createService.ts'
import { s256Challenge } from '../packages/service/src/signin/oauth/pkce.ts'
import { signInState } from '../packages/service/src/signin/signInState.ts'

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const retained = () => {
  gc()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.external + usage.arrayBuffers
}

const service = createService()
const app = service.app
const big = 'c'.repeat(150 * 1024)
const statuses = new Map<number, number>()
const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
const form = { 'Content-Type': 'application/x-www-form-urlencoded' }

async function flood(tag: string): Promise<number> {
  const started = performance.now()
  for (let round = 0; round < 4; round++)
    for (let batch = 0; batch < 300; batch += 50)
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          const i = batch + j
          const huge = await app.request('/dev/oidc/google/authorize', {
            method: 'POST',
            headers: form,
            body: `response_type=code&client_id=${big}&redirect_uri=http://x.test/&code_challenge_method=S256`,
          })
          count(huge.status)
          const small = await app.request('/dev/oidc/google/authorize', {
            method: 'POST',
            headers: form,
            body: new URLSearchParams({
              response_type: 'code',
              client_id: `c${'x'.repeat(500)}`,
              redirect_uri: `http://localhost/${'p'.repeat(2000)}`,
              code_challenge: s256Challenge('v'.repeat(50)),
              code_challenge_method: 'S256',
              state: 's'.repeat(1000),
              email: `${tag}${round}-${i}@example.com`,
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
              body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact: `${tag}${round}-${i}@example.com` }),
            },
            { incoming: { socket: { remoteAddress: '203.0.113.50' } } },
          )
          count(otp.status)
        }),
      )
  return performance.now() - started
}

const heap0 = retained()
const rss0 = process.memoryUsage().rss
const first = await flood('a')
const heap1 = retained()
const rss1 = process.memoryUsage().rss
const second = await flood('b')
const heap2 = retained()
const rss2 = process.memoryUsage().rss

const requests = 2 * 3 * 1200
console.log('sign-in flood (in process, 3,600 requests per flood)')
console.log(
  `  first flood   ${first.toFixed(0)} ms, retained heap +${mb(heap1 - heap0)}, RSS +${mb(rss1 - rss0)}`,
)
console.log(
  `  second flood  ${second.toFixed(0)} ms, retained heap +${mb(heap2 - heap1)}, RSS +${mb(rss2 - rss1)}`,
)
console.log(`  requests/s    ${((requests / (first + second)) * 1000).toFixed(0)}`)
console.log(`  statuses      ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}`)
console.log(
  `  kept          ${signInState(service.runtime).devIdp.pendingCodes()} IdP codes (cap 1000), ${service.store.findBy('pluginRows', 'kind', 'otp').length} OTP records, ${service.store.findBy('pluginRows', 'kind', 'otp-limit').length} rate buckets`,
)
if ([...statuses.keys()].some((s) => s >= 500)) process.exitCode = 1
