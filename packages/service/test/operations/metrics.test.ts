// Metrics and logs of one `latchkey-service dev` process (in memory) with its admin listener and
// JSON logs at debug level: after a scripted scenario (an e-mail sign-up and login through the auth
// proxy, a wallet, 10 signatures, one signature denied by policy) the counters read exactly those
// numbers; and no line the process logged holds any secret, code, token, key or e-mail address the
// scenario made.
import { randomBytes } from 'node:crypto'
import { ACTIVITIES } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testKey } from '../../src/testing/testKeys.ts'
import {
  clientKey,
  codeOf,
  freshEmail,
  otpLogin,
  otpSignup,
  proxy,
  verifiedToken,
} from '../instances/instances.ts'
import { post, RootClient, resultOf } from '../support/RootClient.ts'
import { type ServiceProcess, startService } from '../support/serviceProcess.ts'
import { rows, scrape } from './scrape.ts'

const SIGNATURES = 10

let service: ServiceProcess
let adminUrl: string
const masterKey = randomBytes(32).toString('hex')

beforeAll(async () => {
  service = await startService({
    name: 'metrics',
    args: ['--admin-port', '0', '--log-format', 'json', '--log-level', 'debug', '--crypto-threads', '1'],
    env: { LATCHKEY_MASTER_KEY: masterKey, LATCHKEY_DATABASE_URL: undefined },
    timeoutMs: 120_000,
  })
  adminUrl = (service.info as typeof service.info & { adminUrl: string }).adminUrl
}, 180_000)

afterAll(async () => {
  await service?.stop()
}, 30_000)

describe('metrics and logs', { timeout: 120_000 }, () => {
  it('count a scripted scenario exactly and log none of its secrets', async () => {
    /** Everything secret the scenario makes or sends: no log line may contain any of them. */
    const secrets: Record<string, string> = { masterKey, apiPrivateKey: service.info.apiPrivateKey }
    const root = new RootClient(service.info)
    const stamped = async (path: Parameters<RootClient['prepareActivity']>[0], parameters: object) => {
      const prepared = root.prepareActivity(path, parameters)
      secrets[`stamp of ${path} ${Object.keys(secrets).length}`] = Object.values(prepared.headers)[0]!
      return root.send(service, prepared)
    }

    // Sign-up and login with an e-mail code, through the auth proxy.
    const email = freshEmail('ops')
    secrets.email = email
    const key = clientKey()
    const started = await proxy(service, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
    expect(started.status).toBe(200)
    const code = await codeOf([service], email, started.body.otpId)
    secrets.code = code
    const verified = await proxy(service, 'otp_verify', {
      otpId: started.body.otpId,
      otpCode: code,
      publicKey: key.publicKey,
    })
    expect(verified.status).toBe(200)
    const proof = { token: verified.body.verificationToken as string, key }
    secrets.verificationToken = proof.token
    secrets.clientSignature = key.sign(proof.token)
    const signup = await otpSignup(service, email, proof)
    expect(signup.status).toBe(200)
    const login = await otpLogin(service, proof)
    expect(login.status).toBe(200)
    secrets.session = login.body.session

    // A wallet and 10 signatures by the root key.
    const wallet = resultOf(
      'create_wallet',
      await stamped('create_wallet', {
        walletName: 'metrics',
        accounts: [
          {
            curve: 'CURVE_SECP256K1',
            pathFormat: 'PATH_FORMAT_BIP32',
            path: "m/44'/60'/0'/0/0",
            addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
          },
        ],
      }),
    )
    const signWith = wallet.addresses[0] as string
    const sign = (index: number) => ({
      signWith,
      payload: `0x${index.toString(16).padStart(64, '0')}`,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    })
    for (let index = 0; index < SIGNATURES; index++)
      expect((await stamped('sign_raw_payload', sign(index))).status).toBe(200)

    // A non-root user no policy allows to sign: denied by the policy evaluation.
    const bot = testKey()
    secrets.botPrivateKey = bytesToHex(bot.privateKey)
    resultOf(
      'create_users',
      await stamped('create_users', {
        users: [{ userName: 'bot', apiKeys: [bot.apiKey('bot')], authenticators: [], oauthProviders: [] }],
      }),
    )
    const denied = JSON.stringify({
      type: ACTIVITIES.sign_raw_payload.type,
      timestampMs: String(Date.now()),
      organizationId: service.info.organizationId,
      parameters: sign(SIGNATURES),
    })
    const [header, stamp] = bot.stamp(denied)
    secrets.botStamp = stamp
    const refusal = await post(`${service.baseUrl}/public/v1/submit/sign_raw_payload`, denied, {
      [header]: stamp,
      'X-Request-Id': 'denied-by-policy',
    })
    expect(refusal.status).toBe(403)

    const samples = await scrape(adminUrl)
    expect(rows(samples, 'latchkey_activities_total', { type: 'sign_raw_payload' })).toEqual({
      'status=COMPLETED,outcome=ALLOW': SIGNATURES,
      'status=FAILED,outcome=DENY_IMPLICIT': 1,
    })
    expect(rows(samples, 'latchkey_activities_total', { status: 'COMPLETED' })).toMatchObject({
      'type=init_otp,outcome=ALLOW': 1,
      'type=verify_otp,outcome=ALLOW': 1,
      'type=otp_login,outcome=ALLOW': 1,
      'type=create_wallet,outcome=ALLOW': 1,
      'type=create_users,outcome=ALLOW': 1,
    })
    expect(rows(samples, 'latchkey_signin_otp_total')).toEqual({
      'event=sent,channel=email': 1,
      'event=verified,channel=email': 1,
    })
    expect(rows(samples, 'latchkey_signin_sessions_issued_total')).toEqual({ 'method=otp': 1 })
    // The auth proxy forwards its 4 calls to the activity API in-process: they are submits too.
    const forwarded = 4
    expect(rows(samples, 'latchkey_http_requests_total', { family: 'submit', status: '200' })).toEqual({
      'method=POST': SIGNATURES + 2 + forwarded,
    })
    expect(rows(samples, 'latchkey_http_requests_total', { family: 'proxy', status: '200' })).toEqual({
      'method=POST': forwarded,
    })
    expect(rows(samples, 'latchkey_http_requests_total', { family: 'submit', status: '403' })).toEqual({
      'method=POST': 1,
    })
    expect(rows(samples, 'latchkey_http_request_duration_seconds_count', { family: 'submit' })).toEqual({
      '': SIGNATURES + 3 + forwarded,
    })
    // Every signature ran as a crypto job (the denied one too: its key work starts before the decision).
    const signingJobs = rows(samples, 'latchkey_crypto_job_duration_seconds_count', { kind: 'signPayloads' })
    expect(signingJobs['outcome=ok']).toBeGreaterThanOrEqual(SIGNATURES)
    // The denied signature's key work may still be running when its 403 is sent: it drains to 0.
    await expect
      .poll(async () => rows(await scrape(adminUrl), 'latchkey_crypto_jobs_in_flight'), { timeout: 5_000 })
      .toEqual({ '': 0 })
    expect(rows(samples, 'latchkey_store_unavailable_total')).toEqual({ '': 0 })
    // Process metrics come along.
    expect(samples.some((sample) => sample.name === 'process_cpu_seconds_total')).toBe(true)
    // No label holds an id, an address or a contact.
    for (const sample of samples)
      for (const value of Object.values(sample.labels)) {
        expect(value).not.toMatch(/@|0x[0-9a-f]{8}|[0-9a-f]{8}-[0-9a-f]{4}/i)
      }

    // Logs: every stderr line is one JSON object; request lines carry what an operator reads.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const lines = service
      .stderr()
      .split('\n')
      .filter((line) => line !== '')
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    const requests = logged.filter((line) => line.msg === 'request')
    const signed = requests.filter((line) => line.type === ACTIVITIES.sign_raw_payload.type)
    expect(signed).toHaveLength(SIGNATURES)
    for (const line of signed)
      expect(line).toMatchObject({
        level: 'info',
        method: 'POST',
        route: 'submit',
        path: '/public/v1/submit/sign_raw_payload',
        status: 200,
        organizationId: service.info.organizationId,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        activityId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        durationMs: expect.any(Number),
      })
    expect(requests.find((line) => line.requestId === 'denied-by-policy')).toMatchObject({
      status: 403,
      errorCode: 'PERMISSION_DENIED',
      activityId: expect.any(String),
    })
    expect(logged.filter((line) => line.event === 'signin.otp')).toHaveLength(2)
    for (const [name, secret] of Object.entries(secrets)) {
      expect(secret, name).toMatch(/.{6}/)
      // A code is digits: it must not stand alone in a line (ids and times may hold the same digits).
      const pattern =
        name === 'code'
          ? new RegExp(`(?<![0-9a-f])${secret}(?![0-9a-f])`, 'i')
          : new RegExp(escapeRegExp(secret), 'i')
      for (const line of lines) expect(pattern.test(line), `${name} in ${line}`).toBe(false)
    }
    // The local part of the e-mail address appears nowhere either.
    for (const line of lines) expect(line.includes(email.split('@')[0]!)).toBe(false)
  })

  it('count sessions revoked once each, after their activity committed: a login ending the others, a logout', async () => {
    const email = freshEmail('revoke')
    const first = clientKey()
    const proof = await verifiedToken(service, service, [service], email, first)
    expect((await otpSignup(service, email, proof)).status).toBe(200)
    expect((await otpLogin(service, proof)).status).toBe(200)
    // A second login, from a key the test can stamp with, ending every other session of the user.
    const second = testKey()
    const secondClient = {
      publicKey: second.publicKey,
      sign: (text: string) =>
        bytesToHex(p256.sign(utf8ToBytes(text), second.privateKey, { prehash: true, format: 'compact' })),
    }
    const again = await verifiedToken(service, service, [service], email, secondClient)
    const login = await proxy(service, 'otp_login', {
      verificationToken: again.token,
      publicKey: second.publicKey,
      clientSignature: secondClient.sign(again.token),
      invalidateExisting: true,
    })
    expect(login.status, JSON.stringify(login.body)).toBe(200)
    const claims = JSON.parse(Buffer.from(String(login.body.session).split('.')[1]!, 'base64url').toString())
    const asSession = (path: string, parameters: object, type?: string) => {
      const body = JSON.stringify({
        ...(type ? { type, timestampMs: String(Date.now()) } : {}),
        organizationId: claims.organization_id,
        ...(type ? { parameters } : parameters),
      })
      const [header, stamp] = second.stamp(body)
      return { send: () => post(`${service.baseUrl}/public/v1/${path}`, body, { [header]: stamp }) }
    }
    const keys = await asSession('query/get_api_keys', { userId: claims.user_id }).send()
    expect(keys.status, JSON.stringify(keys.body)).toBe(200)
    const own = (keys.body.apiKeys as { apiKeyId: string; credential: { publicKey: string } }[]).filter(
      (key) => key.credential.publicKey === second.publicKey,
    )
    expect(own).toHaveLength(1)
    // The logout, and the same stamped body again: refused, its key is gone, and revokes nothing more.
    const logout = asSession(
      'submit/delete_api_keys',
      { userId: claims.user_id, apiKeyIds: [own[0]!.apiKeyId] },
      ACTIVITIES.delete_api_keys.type,
    )
    expect((await logout.send()).status).toBe(200)
    expect((await logout.send()).status).toBe(401)

    const samples = await scrape(adminUrl)
    expect(rows(samples, 'latchkey_signin_sessions_revoked_total')).toEqual({
      'reason=invalidate_existing': 1,
      'reason=logout': 1,
    })
  })

  it('returns a well-formed X-Request-Id and replaces one that is not', async () => {
    const kept = await fetch(`${service.baseUrl}/livez`, { headers: { 'X-Request-Id': 'lb-7f3a.42' } })
    expect(kept.headers.get('x-request-id')).toBe('lb-7f3a.42')
    const replaced = await fetch(`${service.baseUrl}/livez`, { headers: { 'X-Request-Id': 'a b/c' } })
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })
})

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
