// Node only: the stamped calls a bulk import or export makes to a running service, as the parent
// organization's root API key (the operator's P-256 key; the service never sees the private half).
import { createPrivateKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import {
  ACTIVITIES,
  type ActivityPath,
  activityResultOf,
  type ImportUserParams,
  STAMP_HEADER,
} from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { signApiKeyStamp } from '../kernel/crypto/stamps.ts'
import type { ImportAnswer } from './bulkImport.ts'

/** How a client reaches the service: `fetch` against `url` (a test passes the app's own). */
export interface ImportClientOptions {
  url: string
  organizationId: string
  /** The root user's P-256 private key (32 bytes). */
  privateKey: Uint8Array
  fetch?: (input: string, init: RequestInit) => Promise<Response>
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

let lastTimestamp = 0
/** Increasing timestamps: two activities of one process never share a fingerprint. */
function timestamp(): string {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1)
  return String(lastTimestamp)
}

/** Stamped activity submissions and queries as the organization's root key. */
export function importClient(options: ImportClientOptions) {
  const send = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init))
  const call = async (route: string, payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload)
    const stamp = signApiKeyStamp(body, {
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      privateKey: options.privateKey,
    })
    const response = await send(`${options.url.replace(/\/$/, '')}${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [STAMP_HEADER]: stamp },
      body,
    })
    const text = await response.text()
    let parsed: { message?: string; activity?: { status?: string; result?: Record<string, unknown> } } = {}
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
    /** The import key's public half, from the signed bundle of `latchkey_init_user_import`. */
    async importKey(): Promise<Uint8Array> {
      const reply = await submit('latchkey_init_user_import', {})
      if (!reply.result)
        throw new Error(`latchkey_init_user_import: ${reply.body.message ?? `HTTP ${reply.status}`}`)
      const bundle = JSON.parse(reply.result.importBundle) as { data: string }
      const data = JSON.parse(new TextDecoder().decode(hexToBytes(bundle.data))) as { targetPublic: string }
      return hexToBytes(data.targetPublic)
    },
    async importUser(params: ImportUserParams): Promise<ImportAnswer> {
      const reply = await submit('latchkey_import_user', params)
      if (reply.result)
        return { ok: true, skipped: reply.result.skipped, subOrganizationId: reply.result.subOrganizationId }
      return {
        ok: false,
        reason: reply.body.message ?? `HTTP ${reply.status}`,
        retry: reply.status === 429 || reply.status >= 500,
      }
    },
  }
}
