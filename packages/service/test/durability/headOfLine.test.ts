// Head of line: three `/v1/oauth2_authenticate` calls wait on an OAuth provider whose
// token endpoint answers in 2 s; meanwhile an unrelated `create_wallet` by the dev API key
// completes in its normal time (≤ 50 ms added to the median measured just before), on SQLite.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, afterEach, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { RootClient, resultOf } from '../support/RootClient.ts'
import { killAll, startService } from '../support/serviceProcess.ts'
import { removeDir, tempDir } from './tempDir.ts'

const PROVIDER_DELAY_MS = 2000
// A call held behind one of the waits would take the provider's 2 s; a tenth of that is room for a
// busy CI machine (one run saw 78 ms for the first call against a 21 ms median) without letting a
// held call through. The test prints its figures when it fails.
const ALLOWED_EXTRA_MS = PROVIDER_DELAY_MS / 10

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

afterEach(killAll)
const cleanups: (() => void | Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/**
 * An OpenID provider on loopback: `/jwks` answers at once, `/token` after `delayMs` with an ES256
 * ID token for the code (its nonce registered by the test, as the authorize step would).
 */
async function slowProvider(delayMs: number) {
  const { publicKey, privateKey } = await generateKeyPair('ES256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'slow-1', alg: 'ES256', use: 'sig' }
  const nonces = new Map<string, string>()
  const arrivals: number[] = []
  let firstAnswerAt = Number.POSITIVE_INFINITY
  let issuer = ''
  const server: Server = createServer((request, response) => {
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify(body))
    }
    const path = new URL(request.url ?? '/', issuer).pathname
    if (request.method === 'GET' && path === '/jwks') return json(200, { keys: [jwk] })
    if (request.method !== 'POST' || path !== '/token') return json(404, { error: 'not_found' })
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => {
      text += chunk
    })
    request.on('end', () => {
      arrivals.push(performance.now())
      const form = new URLSearchParams(text)
      const code = form.get('code') ?? ''
      const nonce = nonces.get(code)
      setTimeout(async () => {
        firstAnswerAt = Math.min(firstAnswerAt, performance.now())
        if (!nonce || form.get('grant_type') !== 'authorization_code')
          return json(400, { error: 'invalid_grant' })
        const idToken = await new SignJWT({ nonce, email: `${code}@example.com`, email_verified: true })
          .setProtectedHeader({ alg: 'ES256', kid: 'slow-1' })
          .setIssuer(issuer)
          .setSubject(`subject-${code}`)
          .setAudience(form.get('client_id') ?? '')
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey)
        json(200, {
          access_token: `access-${code}`,
          token_type: 'Bearer',
          expires_in: 300,
          id_token: idToken,
        })
      }, delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuer,
    nonces,
    arrivals,
    firstAnswerAt: () => firstAnswerAt,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

it('create_wallet is not held behind three oauth2_authenticate calls waiting 2 s on their provider (SQLite)', async () => {
  const provider = await slowProvider(PROVIDER_DELAY_MS)
  cleanups.push(provider.close)
  const dir = tempDir('head-of-line')
  cleanups.push(() => removeDir(dir))
  const service = await startService({ args: ['--data-dir', dir] })
  const client = new RootClient(service.info)

  const settings = await client.send(
    service,
    client.prepareSettings({
      oauth: {
        clientIds: { google: 'head-of-line-client' },
        providers: {
          google: {
            issuer: provider.issuer,
            authorizationEndpoint: `${provider.issuer}/authorize`,
            tokenEndpoint: `${provider.issuer}/token`,
            jwksUri: `${provider.issuer}/jwks`,
          },
        },
      },
    }),
  )
  expect(settings.status, JSON.stringify(settings.body)).toBe(200)

  let n = 0
  const timedCreateWallet = async () => {
    const begin = performance.now()
    const reply = await client.submit(service, 'create_wallet', {
      walletName: `hol-${n++}`,
      accounts: [ETHEREUM_ACCOUNT],
    })
    const end = performance.now()
    resultOf('create_wallet', reply)
    return { ms: end - begin, end }
  }
  for (let i = 0; i < 3; i++) await timedCreateWallet() // warm-up
  const baseline: number[] = []
  for (let i = 0; i < 15; i++) baseline.push((await timedCreateWallet()).ms)

  // Three sign-ins through the auth proxy, each waiting on the provider's token endpoint.
  const signIns = Array.from({ length: 3 }, async (_, i) => {
    const code = `code-${i}-${Date.now()}`
    const sessionKey = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), true))
    const nonce = bytesToHex(sha256(utf8ToBytes(sessionKey)))
    provider.nonces.set(code, nonce)
    const begin = performance.now()
    const response = await fetch(`${service.info.baseUrl}/v1/oauth2_authenticate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [PROXY_CONFIG_HEADER]: service.info.authProxyConfigId! },
      body: JSON.stringify({
        provider: 'OAUTH2_PROVIDER_GOOGLE',
        authCode: code,
        redirectUri: 'http://localhost:5173/oauth/callback',
        codeVerifier: `verifier-${'x'.repeat(40)}-${i}`,
        nonce,
        clientId: 'head-of-line-client',
      }),
    })
    return { status: response.status, body: await response.json(), ms: performance.now() - begin }
  })
  const deadline = Date.now() + 10_000
  while (provider.arrivals.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  expect(provider.arrivals.length, 'the three exchanges did not all reach the provider').toBe(3)

  // While all three wait (the provider answers none before 2 s after the first arrived).
  const during: { ms: number; end: number }[] = []
  for (let i = 0; i < 5; i++) during.push(await timedCreateWallet())
  const lastEnd = Math.max(...during.map((d) => d.end))
  expect(
    lastEnd,
    `create_wallet finished only after the provider answered (${during.map((d) => d.ms.toFixed(0)).join(', ')} ms)`,
  ).toBeLessThan(provider.firstAnswerAt())

  const answers = await Promise.all(signIns)
  for (const answer of answers) {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(typeof answer.body.oidcToken).toBe('string')
    expect(answer.ms).toBeGreaterThanOrEqual(PROVIDER_DELAY_MS - 50)
  }
  // The first call, sent as all three wait, is the one a shared lock would hold; the median of
  // the five is the typical cost while they wait.
  const figures = `create_wallet while waiting: ${during.map((d) => d.ms.toFixed(1)).join(', ')} ms; before: median ${median(baseline).toFixed(1)} ms`
  expect(during[0]!.ms - median(baseline), figures).toBeLessThanOrEqual(ALLOWED_EXTRA_MS)
  expect(median(during.map((d) => d.ms)) - median(baseline), figures).toBeLessThanOrEqual(ALLOWED_EXTRA_MS)
  expect(await service.stop()).toBe(0)
}, 60_000)
