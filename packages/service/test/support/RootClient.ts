// Stamped HTTP calls to a service started by serviceProcess.ts, as the dev organization's root API
// key from its `--json` line: activities, queries and `/dev/settings/update`, each prepared before
// it is sent so the very same bytes can be sent again (a replay).
import { ACTIVITIES, type ActivityPath, SETTINGS_ROUTES } from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { type TestKey, testKey } from '../../src/testing/testKeys.ts'
import type { DevInfo } from './serviceProcess.ts'

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
export type Json = any

export interface Reply {
  status: number
  body: Json
  /** Milliseconds from sending to the whole body read. */
  ms: number
}

/** Where a request goes: a started service (or anything with its base URL). */
export interface Target {
  baseUrl: string
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

  prepareQuery(path: string, body: object = {}): Prepared {
    return this.prepare(`/public/v1/query/${path}`, { organizationId: this.info.organizationId, ...body })
  }

  /** `/dev/settings/update` with a partial ProxySettings. */
  prepareSettings(settings: object): Prepared {
    return this.prepare(SETTINGS_ROUTES.update, {
      organizationId: this.info.organizationId,
      timestampMs: timestamp(),
      settings,
    })
  }

  /** Sends; rejects only when no HTTP answer came (connection refused or reset, or a timeout). */
  send(target: Target, prepared: Prepared, timeoutMs?: number): Promise<Reply> {
    return post(`${target.baseUrl}${prepared.path}`, prepared.body, prepared.headers, timeoutMs)
  }

  submit(target: Target, path: ActivityPath, parameters: object, timeoutMs?: number): Promise<Reply> {
    return this.send(target, this.prepareActivity(path, parameters), timeoutMs)
  }

  query(target: Target, path: string, body: object = {}, timeoutMs?: number): Promise<Reply> {
    return this.send(target, this.prepareQuery(path, body), timeoutMs)
  }

  /** The sub-organizations of the dev organization with a user of this e-mail. */
  async accountsWithEmail(target: Target, email: string): Promise<string[]> {
    const reply = await this.query(target, 'list_suborgs', { filterType: 'EMAIL', filterValue: email })
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

/** `{ status, errorCode }` of an error reply (the service answers `{ code, message, details: { errorCode } }`). */
export const errorOf = (reply: Reply) => ({ status: reply.status, errorCode: reply.body?.details?.errorCode })
