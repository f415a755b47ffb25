// Black-box helpers for the multi-instance tests: a throwaway PostgreSQL (scripts/postgres.mjs),
// N `latchkey-service dev` processes on it with one shared master key (../support/serviceProcess.ts),
// and what the tests do through them over HTTP on 127.0.0.1: proxy calls (`/v1/*`), the dev outbox
// and the kit's OTP sign-in steps. Stamped calls go through ../support/RootClient.ts.
import { randomBytes } from 'node:crypto'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { post, type Reply, RootClient } from '../support/RootClient.ts'
import { type DevInfo, type ServiceProcess, startService } from '../support/serviceProcess.ts'

/** Generous: the first run may apt-get install PostgreSQL; a cluster starts in about a second. */
export const SETUP_TIMEOUT_MS = 600_000

/** One service process of a deployment, named A, B, … */
export type Instance = ServiceProcess

/** One service process on `databaseUrl`; resolves with its `--json` line. */
export function startInstance(
  name: string,
  options: { databaseUrl: string; masterKey: string; args?: string[]; timeoutMs?: number },
): Promise<Instance> {
  return startService({
    name,
    args: ['--database-url', options.databaseUrl, ...(options.args ?? [])],
    // The URL comes from the flag only, never from the environment the tests run in.
    env: { LATCHKEY_MASTER_KEY: options.masterKey, LATCHKEY_DATABASE_URL: undefined },
    timeoutMs: options.timeoutMs,
  })
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

/** A call to the auth proxy (`/v1/<path>`) of `instance` with the dev proxy configuration. */
export function proxy(instance: Instance, path: string, body: object): Promise<Reply> {
  const configId = instance.info.authProxyConfigId
  if (!configId) throw new Error(`${instance.name} printed no authProxyConfigId`)
  return post(`${instance.baseUrl}/v1/${path}`, JSON.stringify(body), { [PROXY_CONFIG_HEADER]: configId })
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
