/**
 * Test harness for the local service: a service with a fake clock, keys that stamp requests, and
 * helpers that create sub-organizations and wallets. Shared by the service, proxy and client tests.
 */

import {
  ACTIVITIES,
  type AccountSpec,
  type ActivityParameters,
  type ActivityPath,
  type AuthenticatorParams,
  WEBAUTHN_STAMP_HEADER,
} from '@latchkey/protocol'
import { webAuthnChallengeOf } from '@latchkey/protocol/webAuthnChallengeOf'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { type CreateServiceOptions, createService, type Service } from '../assembly/createService.ts'
import type { TableName, Tables } from '../kernel/store/model.ts'
import { ETHEREUM_ACCOUNT, type Stamper, type TestKey, testKey } from './testKeys.ts'
import { assertion, attestation, b64url, coseKeyOf } from './webAuthnEncoding.ts'

// The stamping keys and account specs, in a module of their own so the black-box tests (which
// stamp requests to a service process) need not load the whole service to get them.
export { ETHEREUM_ACCOUNT, SOLANA_ACCOUNT, type Stamper, type TestKey, testKey } from './testKeys.ts'

/** A clock tests move by hand. */
export interface FakeClock {
  now(): number
  set(ms: number): void
  advance(ms: number): void
}

export function fakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let now = start
  return {
    now: () => now,
    set: (ms) => {
      now = ms
    },
    advance: (ms) => {
      now += ms
    },
  }
}

/** A software passkey (ES256, "none" attestation) for WebAuthn registration and stamps. */
export interface SoftPasskey extends Stamper {
  credentialId: string
  /** Its public key as COSE, base64url (as an import line carries a passkey). */
  cosePublicKey: string
  /** Registration parameters (`authenticators[]` item) for `challenge`. */
  register(challenge?: string, name?: string): AuthenticatorParams
  counter: number
}

export function softPasskey(
  options: { rpId?: string; origin?: string; credentialId?: Uint8Array } = {},
): SoftPasskey {
  const rpId = options.rpId ?? 'localhost'
  const origin = options.origin ?? 'http://localhost:5173'
  const privateKey = p256.utils.randomSecretKey()
  // An authenticator picks its credential ids: an attacker's may copy another's.
  const credentialIdBytes = options.credentialId ?? globalThis.crypto.getRandomValues(new Uint8Array(16))
  const credentialId = b64url(credentialIdBytes)
  const clientData = (type: string, challenge: string) =>
    utf8ToBytes(JSON.stringify({ type, challenge, origin, crossOrigin: false }))
  const passkey: SoftPasskey = {
    credentialId,
    cosePublicKey: b64url(coseKeyOf(privateKey)),
    counter: 0,
    register(
      challenge = b64url(globalThis.crypto.getRandomValues(new Uint8Array(32))),
      name = 'Test passkey',
    ) {
      const { attestationObject } = attestation(rpId, credentialIdBytes, privateKey)
      return {
        authenticatorName: name,
        challenge,
        attestation: {
          credentialId,
          clientDataJson: b64url(clientData('webauthn.create', challenge)),
          attestationObject: b64url(attestationObject),
          transports: ['AUTHENTICATOR_TRANSPORT_INTERNAL'],
        },
      }
    },
    stamp(body) {
      passkey.counter++
      const challenge = b64url(utf8ToBytes(webAuthnChallengeOf(body)))
      const clientDataJson = clientData('webauthn.get', challenge)
      const { authenticatorData, signature } = assertion(rpId, passkey.counter, clientDataJson, privateKey)
      return [
        WEBAUTHN_STAMP_HEADER,
        JSON.stringify({
          authenticatorData: b64url(authenticatorData),
          clientDataJson: b64url(clientDataJson),
          credentialId,
          signature: b64url(signature),
        }),
      ]
    },
  }
  return passkey
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
export type Json = any

export interface Reply {
  status: number
  body: Json
}

export interface SubmitOptions {
  /** @default the dev root key */
  as?: Stamper
  /** @default the dev organization */
  organizationId?: string
  /** @default the fake clock's now */
  timestampMs?: string
  /** @default the path's activity type */
  type?: string
  headers?: Record<string, string>
  /** Mutates the body text after stamping (tamper tests). */
  tamper?: (body: string) => string
}

export interface Harness {
  service: Service
  clock: FakeClock
  /** The dev parent organization's id and its root key as a stamper. */
  organizationId: string
  root: TestKey
  /** Sends a raw POST. */
  post(path: string, body: string | Uint8Array, headers?: Record<string, string>): Promise<Reply>
  /** Submits an activity, stamped by `options.as` (default: dev root key). */
  submit<P extends ActivityPath>(
    path: P,
    parameters: ActivityParameters<P> | Json,
    options?: SubmitOptions,
  ): Promise<Reply>
  /** Runs a query (`body` without organizationId gets the dev organization's). */
  query(path: string, body?: Record<string, unknown>, options?: Omit<SubmitOptions, 'type'>): Promise<Reply>
  /** A sub-organization of the dev organization with `users` root users (each with a fresh P-256 key). */
  createSubOrganization(options?: {
    name?: string
    users?: number
    threshold?: number
    keys?: TestKey[]
    wallet?: { walletName: string; accounts: AccountSpec[]; mnemonicLength?: number }
    extra?: Record<string, unknown>
  }): Promise<{
    organizationId: string
    userIds: string[]
    keys: TestKey[]
    walletId?: string
    addresses?: string[]
  }>
}

/** Asserts a 200 and returns the activity result (`<name>Result`). */
export function resultOf<P extends ActivityPath>(path: P, reply: Reply): Json {
  if (reply.status !== 200) throw new Error(`${path} failed: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body.activity.result[ACTIVITIES[path].resultKey]
}

/**
 * A sub-organization of the dev organization with one Ethereum account under a rolling daily limit
 * of `amount` native units of `caip2`, set by its root user: where spending-limit tests and
 * benches start.
 */
export async function limitedSubOrganization(
  h: Harness,
  { amount, caip2 = 'eip155:1' }: { amount: string; caip2?: string },
) {
  const sub = await h.createSubOrganization({ wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] } })
  const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
  const from = sub.addresses![0]!
  const { spendingLimitId } = resultOf(
    'latchkey_create_spending_limit',
    await h.submit(
      'latchkey_create_spending_limit',
      {
        spendingLimitName: 'daily',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: from },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2 },
        amount,
      },
      as,
    ),
  )
  return { ...as, from, userIds: sub.userIds, spendingLimitId: spendingLimitId as string }
}

/**
 * Writes `count` rows of `table` straight into the store in one transaction (ids
 * `filler-<table>-<n>`): how a test brings an organization near a cap without thousands of
 * requests. `row` gives each row's fields but its id and times.
 */
export async function fillRows<T extends TableName>(
  h: Harness,
  table: T,
  count: number,
  row: (i: number, id: string) => Omit<Tables[T], 'id' | 'createdAt' | 'updatedAt'>,
): Promise<void> {
  const now = h.clock.now()
  await h.service.store.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      const id = `filler-${table}-${String(i).padStart(6, '0')}`
      await tx.put(table, { ...row(i, id), id, createdAt: now, updatedAt: now } as unknown as Tables[T])
    }
  })
}

export async function createHarness(options: CreateServiceOptions = {}): Promise<Harness> {
  const clock = (options.clock as FakeClock | undefined) ?? fakeClock()
  const service = await createService({ ...options, clock })
  const dev = service.dev
  const root = testKey('SIGNATURE_SCHEME_TK_API_P256', hexToBytes(dev.apiPrivateKey))

  const post: Harness['post'] = async (path, body, headers = {}) => {
    const response = await service.app.request(path, {
      method: 'POST',
      body: typeof body === 'string' ? body : new Uint8Array(body),
      headers: { 'content-type': 'application/json', ...headers },
    })
    const text = await response.text()
    let parsed: Json = text
    try {
      parsed = JSON.parse(text)
    } catch {}
    return { status: response.status, body: parsed }
  }

  const send = (url: string, payload: Record<string, unknown>, options: Omit<SubmitOptions, 'type'>) => {
    const body = JSON.stringify(payload)
    const [header, value] = (options.as ?? root).stamp(body)
    return post(url, options.tamper ? options.tamper(body) : body, { [header]: value, ...options.headers })
  }

  const harness: Harness = {
    service,
    clock,
    organizationId: dev.organizationId,
    root,
    post,
    submit: (path, parameters, options = {}) =>
      send(
        `/public/v1/submit/${path}`,
        {
          type: options.type ?? ACTIVITIES[path].type,
          timestampMs: options.timestampMs ?? String(clock.now()),
          organizationId: options.organizationId ?? dev.organizationId,
          parameters,
        },
        options,
      ),
    query: (path, body = {}, options = {}) =>
      send(
        `/public/v1/query/${path}`,
        { organizationId: options.organizationId ?? dev.organizationId, ...body },
        options,
      ),
    async createSubOrganization(options = {}) {
      const count = options.users ?? options.keys?.length ?? 1
      const keys = options.keys ?? Array.from({ length: count }, () => testKey())
      const reply = await harness.submit('create_sub_organization', {
        subOrganizationName: options.name ?? `Sub ${Math.random().toString(36).slice(2, 8)}`,
        rootUsers: keys.map((key, index) => ({
          userName: `User ${index + 1}`,
          apiKeys: [key.apiKey(`key ${index + 1}`)],
          authenticators: [],
          oauthProviders: [],
        })),
        rootQuorumThreshold: options.threshold ?? 1,
        ...(options.wallet ? { wallet: options.wallet } : {}),
        ...options.extra,
      })
      const result = resultOf('create_sub_organization', reply)
      return {
        organizationId: result.subOrganizationId,
        userIds: result.rootUserIds,
        keys,
        ...(result.wallet ? { walletId: result.wallet.walletId, addresses: result.wallet.addresses } : {}),
      }
    },
  }
  return harness
}

export { bytesToHex }
