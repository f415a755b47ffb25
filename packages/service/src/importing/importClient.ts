// Node only: the stamped calls a bulk import or export makes to a running service, as the parent
// organization's root API key (the operator's P-256 key; the service never sees the private half).
import { createPrivateKey, type KeyObject, sign } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import {
  ACTIVITIES,
  type ActivityPath,
  activityResultOf,
  encodeApiKeyStamp,
  type ImportUserParams,
  STAMP_HEADER,
} from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { openSignedBundle } from '../kernel/crypto/bundles.ts'
import type { ImportAnswer } from './bulkImport.ts'
import {
  ORGANIZATION_IMPORT_KEY_PURPOSE,
  type OrganizationImportBundleData,
} from './organizationImportKey.ts'

/** What a client reads of an answer. */
interface Answer {
  status: number
  text(): Promise<string>
}

/** A POST of `body` with `headers` to `url`. */
type Send = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string },
) => Promise<Answer>

/** How a client reaches the service: `fetch` against `url` (a test passes the app's own). */
export interface ImportClientOptions {
  url: string
  organizationId: string
  /** The root user's P-256 private key (32 bytes). */
  privateKey: Uint8Array
  /**
   * The service's signer public key (`trustedSignerPublicKey`, as `init`, `start` and `dev` print
   * it): the import key is taken only from a bundle it signed for the organization's import key
   * (its purpose `organization_import_key`), naming this organization and the root key's user.
   * Whoever answers the request otherwise would get every plaintext secret.
   * Without it `importKey()` refuses: a client that only sends lines already encrypted (or none
   * with secrets) needs no key.
   */
  trustedSignerPublicKey?: Uint8Array
  /** @default node:http(s) over kept-alive connections (`keepAlivePost`) */
  fetch?: (input: string, init: RequestInit) => Promise<Response>
}

/**
 * POSTs through node:http(s) over kept-alive connections (idle ones do not hold the process
 * open). An import sends one request per user: through `fetch` (undici and its web streams) the
 * request and its answer cost about a sixth of the import process's CPU.
 */
function keepAlivePost(): Send {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, maxSockets: 64 }),
    'https:': new HttpsAgent({ keepAlive: true, maxSockets: 64 }),
  }
  return (url, init) =>
    new Promise<Answer>((resolve, reject) => {
      const target = new URL(url)
      const https = target.protocol === 'https:'
      const request = (https ? httpsRequest : httpRequest)(
        target,
        {
          method: init.method,
          headers: { ...init.headers, 'Content-Length': String(Buffer.byteLength(init.body)) },
          agent: https ? agents['https:'] : agents['http:'],
        },
        (response) => {
          const chunks: Buffer[] = []
          response.on('data', (chunk: Buffer) => chunks.push(chunk))
          response.on('error', reject)
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            resolve({ status: response.statusCode ?? 0, text: async () => text })
          })
        },
      )
      request.on('error', reject)
      request.end(init.body)
    })
}

/** Reads a P-256 private key from a PEM file (`openssl ecparam -genkey`) or 64 hex characters. */
export function readRootKey(file: string): Uint8Array {
  const text = readFileSync(file, 'utf8').trim()
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(text)) return hexToBytes(text.replace(/^0x/, ''))
  let d: string | undefined
  try {
    d = createPrivateKey(text).export({ format: 'jwk' }).d
  } catch {}
  if (!d) throw new Error(`${file} holds neither a PEM private key nor 64 hex characters`)
  return base64urlnopad.decode(d)
}

/**
 * Stamps bodies as the P-256 API key `privateKey` with Node's crypto (OpenSSL: a tenth of the JS
 * signer's time, which an import of 100,000 users feels), low-S like every other stamper here.
 */
export function nativeP256Stamper(privateKey: Uint8Array): (body: string) => string {
  const point = p256.getPublicKey(privateKey, false)
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
  const key: KeyObject = createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      d: b64(privateKey),
      x: b64(point.subarray(1, 33)),
      y: b64(point.subarray(33)),
    },
    format: 'jwk',
  })
  const publicKey = bytesToHex(p256.getPublicKey(privateKey, true))
  return (body) => {
    const der = sign('sha256', Buffer.from(body, 'utf8'), key)
    let parsed = p256.Signature.fromBytes(der, 'der')
    if (parsed.hasHighS()) parsed = new p256.Signature(parsed.r, p256.Point.Fn.ORDER - parsed.s)
    const signature = parsed.toBytes('der')
    return encodeApiKeyStamp({
      publicKey,
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      signature: bytesToHex(signature),
    })
  }
}

let lastTimestamp = 0
/** Increasing timestamps: two activities of one process never share a fingerprint. */
function timestamp(): string {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1)
  return String(lastTimestamp)
}

/** Stamped activity submissions and queries as the organization's root key. */
export function importClient(options: ImportClientOptions) {
  const send: Send = options.fetch ?? keepAlivePost()
  const stamper = nativeP256Stamper(options.privateKey)
  const call = async (route: string, payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload)
    const stamp = stamper(body)
    const response = await send(`${options.url.replace(/\/$/, '')}${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [STAMP_HEADER]: stamp },
      body,
    })
    const text = await response.text()
    let parsed: {
      message?: string
      activity?: { id?: string; status?: string; result?: Record<string, unknown> }
      importedUsers?: { externalId?: unknown }[]
    } = {}
    try {
      parsed = JSON.parse(text)
    } catch {}
    return { status: response.status, body: parsed }
  }
  const submit = async <P extends ActivityPath>(path: P, parameters: unknown) => {
    const reply = await call(`/public/v1/submit/${path}`, {
      type: ACTIVITIES[path].type,
      timestampMs: timestamp(),
      organizationId: options.organizationId,
      parameters,
    })
    const result =
      reply.status === 200 && reply.body.activity ? activityResultOf(path, reply.body.activity) : undefined
    return { ...reply, result }
  }
  return {
    call,
    submit,
    /**
     * The import key's public half, from the bundle of `latchkey_init_user_import`, once it is
     * signed by the trusted signer key, names the purpose `organization_import_key`, this
     * organization and the root key's user (`whoami`); otherwise throws, and nothing is encrypted
     * to it. The purpose is what sets it apart: `whoami` is answered by whoever answers the rest,
     * and every import bundle the service signs (a user's own `init_import_wallet` target, which
     * opens into that user's organization) names an organization, a user and a key.
     */
    async importKey(): Promise<Uint8Array> {
      const trusted = options.trustedSignerPublicKey
      if (!trusted)
        throw new Error(
          'the import key is taken only from a bundle signed by the service: pass trustedSignerPublicKey (--trusted-signer-public-key)',
        )
      const reply = await submit('latchkey_init_user_import', {})
      if (!reply.result)
        throw new Error(`latchkey_init_user_import: ${reply.body.message ?? `HTTP ${reply.status}`}`)
      const refuse = (why: string) =>
        new Error(
          `latchkey_init_user_import: ${why}; nothing was encrypted to its key (a wrong --url, a proxy or another service answered, or a wrong --trusted-signer-public-key)`,
        )
      let data: Partial<OrganizationImportBundleData>
      try {
        data = openSignedBundle<Partial<OrganizationImportBundleData>>(reply.result.importBundle, trusted)
      } catch (error) {
        throw refuse(
          `the import bundle does not verify against the trusted signer key: ${(error as Error).message}`,
        )
      }
      if (data.purpose !== ORGANIZATION_IMPORT_KEY_PURPOSE)
        throw refuse(
          `the import bundle is not the organization's import key (its purpose is ${JSON.stringify(data.purpose ?? null)}, not "${ORGANIZATION_IMPORT_KEY_PURPOSE}": a user's own import target, or a service older than this command)`,
        )
      if (data.organizationId !== options.organizationId)
        throw refuse(
          `the import bundle names organization ${JSON.stringify(data.organizationId)}, not ${options.organizationId}`,
        )
      const me = await call('/public/v1/query/whoami', { organizationId: options.organizationId })
      const caller = me.body as { organizationId?: unknown; userId?: unknown }
      if (me.status !== 200 || typeof caller.userId !== 'string')
        throw new Error(`whoami: ${me.body.message ?? `HTTP ${me.status}`}`)
      if (caller.organizationId !== options.organizationId || data.userId !== caller.userId)
        throw refuse(`the import bundle names user ${JSON.stringify(data.userId)}, not the root key's user`)
      let key: Uint8Array
      try {
        key = p256.Point.fromBytes(hexToBytes(String(data.targetPublic))).toBytes(false)
      } catch {
        throw refuse('the import bundle names no P-256 key')
      }
      return key
    },
    /**
     * Which of `externalIds` are imported already (`latchkey_get_imported_users`); undefined when
     * the service has no such query or refuses it (an older service: the caller sends every line
     * and the service skips). Throws when a retry may help (429, 5xx, the network).
     */
    async importedAmong(externalIds: string[]): Promise<Set<string> | undefined> {
      const reply = await call('/public/v1/query/latchkey_get_imported_users', {
        organizationId: options.organizationId,
        externalIds,
        timestampMs: timestamp(),
      })
      if (reply.status === 429 || reply.status >= 500)
        throw new Error(`latchkey_get_imported_users: ${reply.body.message ?? `HTTP ${reply.status}`}`)
      if (reply.status !== 200 || !Array.isArray(reply.body.importedUsers)) return undefined
      return new Set(reply.body.importedUsers.map((user) => String(user.externalId)))
    },
    async importUser(params: ImportUserParams): Promise<ImportAnswer> {
      const reply = await submit('latchkey_import_user', params)
      if (reply.result)
        return { ok: true, skipped: reply.result.skipped, subOrganizationId: reply.result.subOrganizationId }
      // Accepted but not run: it waits for votes or MFA (a root quorum above 1, an MFA policy), and
      // imports the person once approved. Not a refusal to retry, and not an HTTP status to read.
      const { activity } = reply.body
      if (
        reply.status === 200 &&
        (activity?.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED' ||
          activity?.status === 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
      )
        return {
          ok: false,
          reason: `activity ${activity.id} waits (${activity.status}): approved, it imports this person; a rerun before then submits another`,
        }
      return {
        ok: false,
        reason: reply.body.message ?? `HTTP ${reply.status}`,
        retry: reply.status === 429 || reply.status >= 500,
      }
    },
  }
}
