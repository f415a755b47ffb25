import {
  ACTIVITIES,
  type ActivityPath,
  type ActivityResult,
  activityResultOf,
  isErrorBody,
  PROXY_NONCE_HEADER,
  type QueryResponse,
  type SignInMethod,
  STAMP_HEADER,
} from '@latchkey/protocol'
import type { Context, Hono } from 'hono'
import { MAX_SESSION_SECONDS } from '../../domain/sessions.ts'
import {
  ApiError,
  InternalError,
  NotConfiguredError,
  NotFoundError,
  PermissionError,
} from '../../kernel/base/errors.ts'
import type { Reader } from '../../kernel/Reader.ts'
import type { Runtime } from '../../kernel/Runtime.ts'
import type { ProxyConfigRow } from '../../kernel/store/model.ts'
import type { PipelineEnv } from '../../pipeline/readJson.ts'
import { sessionDefaultOf } from '../proxyConfig.ts'
import { signInState } from '../signInState.ts'
import { signProxyStamp } from './signProxyStamp.ts'

/** An error body the activity API answered, raised again as the same error for the proxy's caller. */
function relayed(reply: unknown): ApiError {
  if (!isErrorBody(reply)) return new InternalError({ message: 'the activity API answered unexpectedly' })
  const { errorCode, field, ...extra } = reply.details
  return new ApiError(errorCode, reply.message, field, extra)
}

/**
 * One auth-proxy request: its configuration, the checks every route shares, and calls to the
 * activity API's public routes (in-process, same app) as the proxy user, stamped with the proxy
 * key, which is opened for that one signature only.
 */
export class ProxyCall {
  constructor(
    /** The whole service app: forwarded calls go through its public routes. */
    private readonly app: Hono<PipelineEnv>,
    readonly runtime: Runtime,
    readonly config: ProxyConfigRow,
    readonly c: Context,
  ) {}

  get settings() {
    return this.config.settings
  }

  /** The parent organization the configuration belongs to. */
  get organizationId() {
    return this.config.organizationId
  }

  requireMethod(method: SignInMethod | undefined, what: string): void {
    if (method === undefined || !this.settings.enabledProviders.includes(method))
      throw new PermissionError({
        code: 'METHOD_DISABLED',
        message: `${what} is not enabled for this auth-proxy configuration`,
        extra: method ? { method } : {},
      })
  }

  /** POSTs `body` to a public route, stamped with the proxy key; an error answer is raised again. */
  private async send(route: string, body: Record<string, unknown>): Promise<unknown> {
    const text = JSON.stringify(body)
    const publicKey = (await this.runtime.store.findBy('apiKeys', 'userId', this.config.proxyUserId!))[0]
      ?.publicKey
    if (!publicKey)
      throw new NotConfiguredError({
        code: 'PROXY_DISABLED',
        message: 'the auth proxy has no key; switch it off and on again',
      })
    const privateKey = this.runtime.open(this.config.sealedProxyPrivateKey!)
    let stamp: string
    try {
      stamp = await signProxyStamp(text, privateKey, publicKey)
    } finally {
      privateKey.fill(0)
    }
    const response = await this.app.request(route, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        [STAMP_HEADER]: stamp,
        // Two instances may sign identical bodies in the same millisecond; the nonce keeps them two
        // activities (honoured only for the proxy user's own stamps, see submitActivity).
        [PROXY_NONCE_HEADER]: crypto.randomUUID(),
      },
      body: text,
    })
    const reply: unknown = await response.json().catch(() => undefined)
    if (!response.ok) throw relayed(reply)
    return reply
  }

  /** Submits an activity as the proxy user and returns its result (it must complete). */
  async submit<P extends ActivityPath>(
    path: P,
    parameters: Record<string, unknown>,
    organizationId = this.organizationId,
  ): Promise<ActivityResult<P>> {
    const reply = (await this.send(`/public/v1/submit/${path}`, {
      type: ACTIVITIES[path].type,
      timestampMs: signInState(this.runtime).nextProxyTimestamp(),
      organizationId,
      parameters,
    })) as { activity: { status: string; result?: Record<string, unknown> } }
    const result = activityResultOf(path, reply.activity)
    if (reply.activity.status !== 'ACTIVITY_STATUS_COMPLETED' || result === undefined)
      throw new InternalError({ message: `${path} did not complete (${reply.activity.status})` })
    return result
  }

  /** First sub-organization of the parent matching a `list_suborgs` filter, or null. */
  async findSubOrganization(filterType: string, filterValue: string): Promise<string | null> {
    const reply = (await this.send('/public/v1/query/list_suborgs', {
      organizationId: this.organizationId,
      timestampMs: signInState(this.runtime).nextProxyTimestamp(),
      filterType,
      filterValue,
      paginationOptions: { limit: '1' },
    })) as QueryResponse<'list_suborgs'>
    return reply.organizationIds[0] ?? null
  }

  /** The sub-organization a login goes to: named in the body, or found by the credential. */
  async targetOrganization(
    r: Reader,
    filterType: string,
    filterValue: string,
    what: string,
  ): Promise<string> {
    const explicit = r.optString('organizationId', { max: 200 })
    // The proxy logs people in to sub-organizations only, never to the parent it acts for.
    if (explicit === this.organizationId)
      throw new PermissionError({
        field: 'organizationId',
        message: 'the auth proxy logs in to sub-organizations only',
      })
    if (explicit !== undefined) return explicit
    const found = await this.findSubOrganization(filterType, filterValue)
    if (!found)
      throw new NotFoundError({
        code: 'ACCOUNT_NOT_FOUND',
        message: `no account for this ${what}; sign up first`,
      })
    return found
  }

  /** The session lifetime a login asks for, or the configuration's. */
  sessionSeconds(r: Reader): string {
    // Bounded here as the login activity bounds it, so the refusal names the proxy's own field.
    return (
      r.optUintString('expirationSeconds', { max: MAX_SESSION_SECONDS }) ?? sessionDefaultOf(this.settings)
    )
  }
}
