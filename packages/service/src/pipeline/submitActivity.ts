import {
  ACTIVITIES,
  type Activity,
  type ActivityPath,
  type ErrorCode,
  type PolicyOutcome,
} from '@latchkey/protocol'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { authenticate } from '../auth/authenticate.ts'
import { CryptoInputError } from '../crypto/index.ts'
import { ServiceError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import type { ActivityContext, ActivityHandler, Caller } from '../registry.ts'
import type { ActivityRow, OrganizationRow } from '../store/model.ts'
import type { Transaction } from '../store/Store.ts'
import { Reader } from './Reader.ts'
import { renderActivity } from './renderActivity.ts'

/** Turns anything a handler throws into a ServiceError (crypto input errors name their field). */
export function toServiceError(error: unknown, fieldPrefix = 'parameters'): ServiceError {
  if (error instanceof ServiceError) return error
  if (error instanceof CryptoInputError)
    return new ServiceError(
      'FIELD_INVALID',
      error.message,
      error.field ? `${fieldPrefix}.${error.field}` : undefined,
    )
  return new ServiceError('INTERNAL', 'internal error')
}

/** Parses a request body as a JSON object; a 400 naming the problem otherwise. */
export function parseBody(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    throw new ServiceError('BODY_INVALID', `request body is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ServiceError('BODY_INVALID', 'request body must be a JSON object')
  return value as Record<string, unknown>
}

/** Checks `timestampMs` against the clock (the request must be live). */
export function checkTimestamp(service: Runtime, body: Reader): void {
  const timestampMs = Number(body.uintString('timestampMs'))
  const skew = Math.abs(service.now() - timestampMs)
  if (skew > service.options.maxTimestampSkewMs)
    throw new ServiceError(
      'TIMESTAMP_STALE',
      `timestampMs is ${Math.round(skew / 1000)} s away from the service clock (limit ${service.options.maxTimestampSkewMs / 1000} s)`,
      'timestampMs',
    )
}

export function recordEvaluation(
  tx: Transaction,
  service: Runtime,
  activity: ActivityRow,
  outcome: PolicyOutcome,
  voteId = '',
): void {
  const now = service.now()
  tx.put('policyEvaluations', {
    id: service.newId(),
    activityId: activity.id,
    organizationId: activity.organizationId,
    voteId,
    outcomes: [{ outcome }],
    createdAt: now,
    updatedAt: now,
  })
}

export function recordVote(
  tx: Transaction,
  service: Runtime,
  activity: ActivityRow,
  caller: Caller,
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED',
): string {
  const now = service.now()
  const id = service.newId()
  tx.put('votes', {
    id,
    organizationId: activity.organizationId,
    activityId: activity.id,
    userId: caller.userId,
    selection,
    message: activity.fingerprint,
    publicKey: caller.credential.publicKey,
    signature: caller.credential.signature,
    scheme: caller.credential.scheme,
    createdAt: now,
    updatedAt: now,
  })
  return id
}

/**
 * Runs an activity's handler inside `tx` and stores its outcome on the activity row. A handler
 * that throws has its writes rolled back (the row becomes FAILED with the error); the thrown
 * ServiceError is returned so the caller can answer with it.
 */
export async function executeActivity(
  tx: Transaction,
  service: Runtime,
  row: ActivityRow,
  organization: OrganizationRow,
  caller: Caller,
): Promise<{ row: ActivityRow; error?: ServiceError; respondWith?: string }> {
  const handler = service.activities.get(row.path as ActivityPath) as ActivityHandler | undefined
  const savepoint = tx.savepoint()
  let respondWith: string | undefined
  const ctx: ActivityContext & { respondWith?: string } = {
    tx,
    service,
    now: service.now(),
    organization,
    caller,
    activityId: row.id,
    newId: () => service.newId(),
  }
  try {
    if (!handler) throw new ServiceError('ROUTE_NOT_FOUND', `no handler for ${row.path}`)
    const parameters = handler.parse(new Reader(row.intent, 'parameters'))
    const result = await handler.run(ctx, parameters as never)
    respondWith = ctx.respondWith
    const done = tx.put('activities', {
      ...row,
      status: 'ACTIVITY_STATUS_COMPLETED',
      result: result as Record<string, unknown>,
      updatedAt: service.now(),
    })
    return { row: done, ...(respondWith ? { respondWith } : {}) }
  } catch (thrown) {
    tx.rollbackTo(savepoint)
    const error = toServiceError(thrown)
    if (error.errorCode === 'INTERNAL') console.error(`activity ${row.path} failed`, thrown)
    const failed = tx.put('activities', {
      ...row,
      status: 'ACTIVITY_STATUS_FAILED',
      failure: error.toBody() as ActivityRow['failure'] & object,
      updatedAt: service.now(),
    })
    return { row: failed, error }
  }
}

/** Lets a handler answer with another activity than itself (approve/reject answer with the voted one). */
export function respondWith(ctx: ActivityContext, activityId: string): void {
  ;(ctx as ActivityContext & { respondWith?: string }).respondWith = activityId
}

export interface SubmitOutcome {
  activity: Activity
}

/**
 * The whole submit pipeline: parse, authenticate (raw bytes), check liveness, type and
 * organization, authorise, validate parameters, then record and run the activity in one
 * transaction (or leave it awaiting consensus when the organization's root quorum needs it).
 */
export async function submitActivity(
  service: Runtime,
  path: string,
  headers: Headers,
  bytes: Uint8Array,
): Promise<SubmitOutcome> {
  const definition = ACTIVITIES[path as ActivityPath]
  const handler = service.activities.get(path as ActivityPath) as ActivityHandler | undefined
  if (!definition || !handler)
    throw new ServiceError('ROUTE_NOT_FOUND', `no activity at /public/v1/submit/${path.slice(0, 80)}`)
  const json = parseBody(bytes)
  const target = typeof json.organizationId === 'string' ? json.organizationId : undefined
  const caller = await authenticate(service, headers, bytes, 'submit', target)
  const body = new Reader(json, '')
  const type = body.string('type', { max: 200 })
  if (type !== definition.type)
    throw new ServiceError(
      'ACTIVITY_TYPE_MISMATCH',
      `type must be ${definition.type} for ${path}, got ${type}`,
      'type',
    )
  checkTimestamp(service, body)
  const organizationId = body.string('organizationId', { max: 200 })
  const named = service.store.get('organizations', organizationId)
  if (!named)
    throw new ServiceError(
      'ORGANIZATION_NOT_FOUND',
      `organization ${organizationId} not found`,
      'organizationId',
    )
  // A sub-organization's user naming the parent (passkey login before the client knows its
  // sub-organization) acts in its own sub-organization when the handler allows it.
  const callerOrganization = service.store.get('organizations', caller.organizationId)
  const organization =
    handler.resolveSubOrganization && callerOrganization?.parentOrganizationId === named.id
      ? callerOrganization
      : named
  const sameOrganization = caller.organizationId === organization.id
  const fromParent = caller.organizationId === organization.parentOrganizationId
  if (!sameOrganization && !(fromParent && handler.allowParentOrganization))
    throw new ServiceError(
      'PERMISSION_DENIED',
      fromParent
        ? `${path} must be submitted by a user of organization ${organization.id}, not by its parent organization`
        : `your key belongs to organization ${caller.organizationId}, not ${organization.id}`,
      'organizationId',
    )
  for (const plugin of service.plugins)
    plugin.authorize?.({ kind: 'activity', path, caller, organization }, service)
  const parametersReader = body.object('parameters')
  handler.parse(parametersReader)
  // The fingerprint binds the body to the credential that stamped it: the same bytes from the same
  // credential are a replay, the same bytes from another root user are a distinct activity.
  const fingerprint = bytesToHex(sha256(concatBytes(utf8ToBytes(`${caller.credential.id}\n`), bytes)))

  const outcome = await service.store.transaction(async (tx) => {
    // An exact replay of a signed request answers with the activity it created.
    const replay = tx.findBy('activities', 'fingerprint', fingerprint)[0]
    if (replay) {
      const failure = replay.failure
      const error = failure
        ? new ServiceError(
            failure.details.errorCode as ErrorCode,
            failure.message,
            failure.details.field as string | undefined,
          )
        : undefined
      return { row: replay, ...(error ? { error } : {}) } as {
        row: ActivityRow
        error?: ServiceError
        respondWith?: string
      }
    }
    const now = service.now()
    const row = tx.put('activities', {
      id: service.newId(),
      organizationId: organization.id,
      path,
      type: definition.type,
      status: 'ACTIVITY_STATUS_CREATED',
      intent: parametersReader.value,
      fingerprint,
      userId: caller.userId,
      credentialId: caller.credential.id,
      callerOrganizationId: caller.organizationId,
      createdAt: now,
      updatedAt: now,
    })
    const isRoot = sameOrganization && organization.rootUserIds.includes(caller.userId)
    if (sameOrganization && !isRoot && !handler.allowNonRoot) {
      recordEvaluation(tx, service, row, 'OUTCOME_DENY_IMPLICIT')
      const error = new ServiceError(
        'PERMISSION_DENIED',
        `only root users of organization ${organization.id} may submit ${path}`,
      )
      const failed = tx.put('activities', {
        ...row,
        status: 'ACTIVITY_STATUS_FAILED',
        failure: error.toBody() as ActivityRow['failure'] & object,
      })
      return { row: failed, error }
    }
    if (isRoot && organization.rootQuorumThreshold > 1 && !handler.skipConsensus) {
      const pending = tx.put('activities', { ...row, status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED' })
      const voteId = recordVote(tx, service, pending, caller, 'VOTE_SELECTION_APPROVED')
      recordEvaluation(tx, service, pending, 'OUTCOME_REQUIRES_CONSENSUS', voteId)
      return { row: pending }
    }
    recordEvaluation(tx, service, row, 'OUTCOME_ALLOW')
    return executeActivity(tx, service, row, organization, caller)
  })
  if (outcome.error) throw outcome.error
  const shown = outcome.respondWith ? service.store.get('activities', outcome.respondWith)! : outcome.row
  return { activity: renderActivity(service.store, shown, caller) }
}
