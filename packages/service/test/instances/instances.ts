// Black-box helpers for the multi-instance tests: a throwaway PostgreSQL (scripts/postgres.mjs),
// N `latchkey-service dev --port 0 --json --database-url …` processes on it with one shared master
// key, and clients that talk HTTP to them on 127.0.0.1: stamped activities and queries with the
// dev root key, proxy calls (`/v1/*`) and the dev outbox.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { ACTIVITIES, type ActivityPath, PROXY_CONFIG_HEADER, SETTINGS_ROUTES } from '@latchkey/protocol'
import { type TestKey, testKey } from '@latchkey/service/testing'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'

export const root = fileURLToPath(new URL('../../../../', import.meta.url))
const CLI = join(root, 'packages/service/src/cli.ts')

/** Generous: the first run may apt-get install PostgreSQL; a cluster starts in about a second. */
export const SETUP_TIMEOUT_MS = 600_000

/** The `--json` line of `latchkey-service dev`. */
export interface DevInfo {
  baseUrl: string
  organizationId: string
  authProxyConfigId: string
  apiPublicKey: string
  apiPrivateKey: string
  outboxUrl: string
  trustedSignerPublicKey: string
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
export type Json = any

export interface Reply {
  status: number
  body: Json
  /** Milliseconds from sending to the whole body read. */
  ms: number
}

/** `{ status, errorCode }` of an error reply (the service answers `{ code, message, details: { errorCode } }`). */
export const errorOf = (reply: Reply) => ({ status: reply.status, errorCode: reply.body?.details?.errorCode })

export interface Instance {
  name: string
  info: DevInfo
  baseUrl: string
  child: ChildProcess
  /** The service's stderr so far. */
  stderr(): string
  /** SIGTERM (SIGKILL after 5 s) and wait for the exit. */
  stop(): Promise<void>
}

const children = new Set<ChildProcess>()
let exitHooked = false
function hookExit() {
  if (exitHooked) return
  exitHooked = true
  // A test process that dies without afterAll still takes its services with it.
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL')
  })
}

/** One service process on `databaseUrl`; resolves with its `--json` line. */
export async function startInstance(
  name: string,
  options: { databaseUrl: string; masterKey: string; args?: string[]; timeoutMs?: number },
): Promise<Instance> {
  hookExit()
  const args = ['--import', 'tsx', CLI, 'dev', '--port', '0', '--json']
  args.push('--database-url', options.databaseUrl, ...(options.args ?? []))
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'development',
    LATCHKEY_MASTER_KEY: options.masterKey,
  }
  delete env.LATCHKEY_DATABASE_URL
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000)
  })
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      children.delete(child)
      resolve()
    }),
  )
  const timeoutMs = options.timeoutMs ?? 60_000
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${name} printed no --json line within ${timeoutMs} ms\n${stderr}`))
    }, timeoutMs)
    createInterface({ input: child.stdout! }).once('line', (first) => {
      clearTimeout(timer)
      resolve(first)
    })
    void exited.then(() => {
      clearTimeout(timer)
      reject(
        new Error(`${name} exited (${child.signalCode ?? child.exitCode}) before it was ready\n${stderr}`),
      )
    })
  })
  child.stdout!.resume()
  const info = JSON.parse(line) as DevInfo
  return {
    name,
    info,
    baseUrl: info.baseUrl.replace(/\/$/, ''),
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    },
  }
}

export interface Deployment {
  cluster: PostgresCluster
  instances: Instance[]
  /** The dev credentials every instance printed (they are the same). */
  info: DevInfo
  masterKey: string
  /** Stops the services, then the cluster, and removes its folder. */
  close(): Promise<void>
}

/**
 * A fresh PostgreSQL cluster and `count` service processes on it, started at the same time on the
 * empty database (the contract says concurrent first starts are safe), with one master key.
 */
export async function startDeployment(count = 2, options: { args?: string[] } = {}): Promise<Deployment> {
  const cluster = await startPostgres()
  const masterKey = randomBytes(32).toString('hex')
  const started = await Promise.allSettled(
    Array.from({ length: count }, (_, index) =>
      startInstance(String.fromCharCode(65 + index), {
        databaseUrl: cluster.url,
        masterKey,
        args: options.args,
      }),
    ),
  )
  const instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
  const close = async () => {
    await Promise.all(instances.map((instance) => instance.stop()))
    await cluster.dispose()
  }
  const failed = started.find((result) => result.status === 'rejected')
  if (failed) {
    await close()
    throw (failed as PromiseRejectedResult).reason
  }
  return { cluster, instances, info: instances[0]!.info, masterKey, close }
}

/**
 * After a failed test, the last lines each service process and the database wrote to stderr
 * (a 500's cause is only there).
 */
export function printLogsOnFailure(deployment: () => Deployment | undefined): void {
  afterEach((context) => {
    const current = deployment()
    if (context.task.result?.state !== 'fail' || !current) return
    const tail = (text: string) => text.split('\n').slice(-40).join('\n')
    for (const instance of current.instances)
      console.error(`--- service ${instance.name} stderr (last 40 lines) ---\n${tail(instance.stderr())}`)
    console.error(`--- postgres log (last 40 lines) ---\n${tail(current.cluster.logs())}`)
  })
}

/** A POST with a JSON body; answers `{ status, body, ms }`, rejects only when no answer came. */
export async function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<Reply> {
  const started = performance.now()
  const response = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
    signal: AbortSignal.timeout(timeoutMs),
  })
  const text = await response.text()
  let parsed: Json = text
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: response.status, body: parsed, ms: performance.now() - started }
}

/** A stamped request, kept so the very same bytes can be sent again (a replay). */
export interface Prepared {
  path: string
  body: string
  headers: Record<string, string>
}

let lastTimestamp = 0
/** Unique, increasing timestamps: two activities never share a fingerprint by accident. */
function timestamp(): string {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1)
  return String(lastTimestamp)
}

/** Stamped calls as the dev organization's root API key (from the `--json` line). */
export class RootClient {
  readonly key: TestKey

  constructor(readonly info: DevInfo) {
    this.key = testKey('SIGNATURE_SCHEME_TK_API_P256', hexToBytes(info.apiPrivateKey))
  }

  private prepare(path: string, payload: object): Prepared {
    const body = JSON.stringify(payload)
    const [header, value] = this.key.stamp(body)
    return { path, body, headers: { [header]: value } }
  }

  prepareActivity(
    path: ActivityPath,
    parameters: object,
    organizationId = this.info.organizationId,
  ): Prepared {
    return this.prepare(`/public/v1/submit/${path}`, {
      type: ACTIVITIES[path].type,
      timestampMs: timestamp(),
      organizationId,
      parameters,
    })
  }

  prepareSettings(settings: object): Prepared {
    return this.prepare(SETTINGS_ROUTES.update, {
      organizationId: this.info.organizationId,
      timestampMs: timestamp(),
      settings,
    })
  }

  send(instance: Instance, prepared: Prepared, timeoutMs?: number): Promise<Reply> {
    return post(`${instance.baseUrl}${prepared.path}`, prepared.body, prepared.headers, timeoutMs)
  }

  submit(instance: Instance, path: ActivityPath, parameters: object, timeoutMs?: number): Promise<Reply> {
    return this.send(instance, this.prepareActivity(path, parameters), timeoutMs)
  }

  query(instance: Instance, path: string, body: object = {}, timeoutMs?: number): Promise<Reply> {
    return this.send(
      instance,
      this.prepare(`/public/v1/query/${path}`, { organizationId: this.info.organizationId, ...body }),
      timeoutMs,
    )
  }

  /** The sub-organizations of the dev organization with a user of this e-mail. */
  async accountsWithEmail(instance: Instance, email: string): Promise<string[]> {
    const reply = await this.query(instance, 'list_suborgs', { filterType: 'EMAIL', filterValue: email })
    if (reply.status !== 200)
      throw new Error(`list_suborgs answered ${reply.status} ${JSON.stringify(reply.body)}`)
    return reply.body.organizationIds
  }
}

/** The activity's result of a 200, or an error naming the status and body. */
export function resultOf(path: ActivityPath, reply: Reply): Json {
  if (reply.status !== 200) throw new Error(`${path} answered ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body.activity.result[ACTIVITIES[path].resultKey]
}

/** A call to the auth proxy (`/v1/<path>`) of `instance` with the dev proxy configuration. */
export function proxy(instance: Instance, path: string, body: object): Promise<Reply> {
  return post(`${instance.baseUrl}/v1/${path}`, JSON.stringify(body), {
    [PROXY_CONFIG_HEADER]: instance.info.authProxyConfigId,
  })
}

/**
 * The code sent for `otpId`. The dev outbox is each process's own mailbox, so every instance's is
 * read (only the one that sent the code has it).
 */
export async function codeOf(instances: Instance[], contact: string, otpId: string): Promise<string> {
  for (const instance of instances) {
    const response = await fetch(
      `${instance.baseUrl}/dev/outbox.json?contact=${encodeURIComponent(contact)}`,
      {
        signal: AbortSignal.timeout(10_000),
      },
    )
    if (response.status !== 200) continue
    const { messages } = (await response.json()) as { messages: { otpId: string; code: string }[] }
    const message = messages.find((m) => m.otpId === otpId)
    if (message) return message.code
  }
  throw new Error(`no instance's outbox holds the code of ${otpId} for ${contact}`)
}

/** A client's P-256 session key: the compressed public key and hex signatures (as the kit makes them). */
export function clientKey() {
  const privateKey = p256.utils.randomSecretKey()
  return {
    publicKey: bytesToHex(p256.getPublicKey(privateKey, true)),
    sign: (text: string) =>
      bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format: 'compact' })),
  }
}
export type ClientKey = ReturnType<typeof clientKey>

/** otp_init on `init`, code from the outbox, otp_verify on `verify`: a token bound to `key`. */
export async function verifiedToken(
  init: Instance,
  verify: Instance,
  instances: Instance[],
  email: string,
  key: ClientKey = clientKey(),
): Promise<{ token: string; key: ClientKey }> {
  const started = await proxy(init, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  if (started.status !== 200)
    throw new Error(`otp_init answered ${started.status} ${JSON.stringify(started.body)}`)
  const code = await codeOf(instances, email, started.body.otpId)
  const verified = await proxy(verify, 'otp_verify', {
    otpId: started.body.otpId,
    otpCode: code,
    publicKey: key.publicKey,
  })
  if (verified.status !== 200)
    throw new Error(`otp_verify answered ${verified.status} ${JSON.stringify(verified.body)}`)
  return { token: verified.body.verificationToken, key }
}

/** The kit's OTP sign-up through the proxy: the proven e-mail, the token and the bound key's signature. */
export function otpSignup(instance: Instance, email: string, proof: { token: string; key: ClientKey }) {
  return proxy(instance, 'signup', {
    userEmail: email,
    verificationToken: proof.token,
    clientSignature: proof.key.sign(proof.token),
    apiKeys: [],
    authenticators: [],
    oauthProviders: [],
  })
}

/** otp_login through the proxy with the key the token is bound to. */
export function otpLogin(instance: Instance, proof: { token: string; key: ClientKey }) {
  return proxy(instance, 'otp_login', {
    verificationToken: proof.token,
    publicKey: proof.key.publicKey,
    clientSignature: proof.key.sign(proof.token),
  })
}

/** A fresh e-mail for one test (contacts carry their own rate limits). */
export const freshEmail = (label: string) => `${label}-${randomBytes(4).toString('hex')}@example.com`

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Instances A and B of a two-instance deployment, and the dev root key's client (set in `beforeAll`). */
export interface TwoInstances {
  a: Instance
  b: Instance
  both: Instance[]
  root: RootClient
}

/**
 * Starts two instances on one fresh PostgreSQL for the calling file's tests (`beforeAll`), prints
 * their logs when a test fails, and stops them all (`afterAll`). Read the fields inside tests.
 */
export function useTwoInstances(): TwoInstances {
  let deployment: Deployment | undefined
  const two = {} as TwoInstances
  beforeAll(async () => {
    deployment = await startDeployment(2)
    const [a, b] = deployment.instances as [Instance, Instance]
    Object.assign(two, { a, b, both: [a, b], root: new RootClient(deployment.info) })
  }, SETUP_TIMEOUT_MS)
  printLogsOnFailure(() => deployment)
  afterAll(async () => {
    await deployment?.close()
  }, 60_000)
  return two
}
