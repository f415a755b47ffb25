import {
  ACTIVITIES,
  type Activity,
  type ActivityPath,
  type ErrorCode,
  PROXY_NONCE_HEADER,
} from '@latchkey/protocol'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { authenticate } from '../auth/authenticate.ts'
import { ApiError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import type { ActivityHandler, Registry } from '../registry.ts'
import type { ActivityRow } from '../store/model.ts'
import { isDatabaseError, type Transaction } from '../store/Store.ts'
import { checkTimestamp } from './checkTimestamp.ts'
import { decideActivity } from './decideActivity.ts'
import { type Execution, executeActivity } from './executeActivity.ts'
import { Reader } from './Reader.ts'
import { renderActivity } from './renderActivity.ts'
import { requestReads } from './requestReads.ts'
import { requireOrganization } from './requireOrganization.ts'

export interface SubmitOutcome {
  activity: Activity
}

/** The error an activity failed with, as stored on its row. */
export { PROXY_NONCE_HEADER }

const storedError = (row: ActivityRow): ApiError | undefined =>
  row.failure
    ? new ApiError(
        row.failure.details.errorCode as ErrorCode,
        row.failure.message,
        row.failure.details.field as string | undefined,
      )
    : undefined

/**
 * `POST /public/v1/submit/<path>` after the body was read: authenticate (against the raw
 * bytes), check type, liveness and organization, parse the parameters once, then in one
 * transaction record the activity, decide on it and run it (or leave it awaiting consensus).
 */
export async function submitActivity(
  service: Runtime,
  registry: Registry,
  path: string,
  headers: Headers,
  bytes: Uint8Array,
  json: Record<string, unknown>,
): Promise<SubmitOutcome> {
  const definition = ACTIVITIES[path as ActivityPath]
  const handler = registry.activities.get(path as ActivityPath) as ActivityHandler | undefined
  if (!definition || !handler)
    throw new ApiError('ROUTE_NOT_FOUND', `no activity at /public/v1/submit/${path.slice(0, 80)}`)
  const target = typeof json.organizationId === 'string' ? json.organizationId : undefined
  const reads = await requestReads(service, registry, headers, target)
  const caller = await authenticate(service, headers, bytes, 'submit', target, reads)
  const body = new Reader(json, '')
  const type = body.string('type', { max: 200 })
  if (type !== definition.type)
    throw new ApiError(
      'ACTIVITY_TYPE_MISMATCH',
      `type must be ${definition.type} for ${path}, got ${type}`,
      'type',
    )
  checkTimestamp(service, body)
  const named = await requireOrganization(reads, body.string('organizationId', { max: 200 }))
  // A sub-organization's user naming the parent (passkey login before the client knows its
  // sub-organization) acts in its own sub-organization when the handler allows it.
  const callerOrganization =
    caller.organizationId === named.id ? named : await reads.get('organizations', caller.organizationId)
  const organization =
    handler.resolveSubOrganization && callerOrganization?.parentOrganizationId === named.id
      ? callerOrganization
      : named
  const sameOrganization = caller.organizationId === organization.id
  const fromParent = caller.organizationId === organization.parentOrganizationId
  if (!sameOrganization && !(fromParent && handler.allowParentOrganization))
    throw new ApiError(
      'PERMISSION_DENIED',
      fromParent
        ? `${path} must be submitted by a user of organization ${organization.id}, not by its parent organization`
        : `your key belongs to organization ${caller.organizationId}, not ${organization.id}`,
      'organizationId',
    )
  for (const plugin of registry.plugins)
    await plugin.authorize?.({ kind: 'activity', path, caller, organization, reads }, service)
  const parametersReader = body.object('parameters')
  const parameters = handler.parse(parametersReader)

  let vouched = false
  for (const plugin of registry.plugins)
    if (await plugin.vouchesFor?.({ path, caller, organization, reads }, service)) vouched = true
  // The fingerprint binds the body to the credential that stamped it: the same bytes from the same
  // credential are a replay, the same bytes from another root user are a distinct activity. A
  // plugin's own user (the auth proxy, whose key never leaves the service) may add a nonce, so two
  // instances forwarding identical calls in one millisecond make two activities; anyone else's
  // nonce header is ignored, so it cannot turn a replay into a new activity.
  const nonceHeader = headers.get(PROXY_NONCE_HEADER)
  let owned = false
  if (nonceHeader)
    for (const plugin of registry.plugins) if (await plugin.ownsCaller?.(caller, service)) owned = true
  const nonce = owned ? (nonceHeader ?? '') : ''
  const fingerprint = bytesToHex(
    sha256(concatBytes(utf8ToBytes(`${caller.credential.id}\n${nonce ? `${nonce}\n` : ''}`), bytes)),
  )
  const activityId = service.newId()
  const provisional = (now: number): ActivityRow => ({
    id: activityId,
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

  // Key work the transaction would otherwise wait on starts now: its reads finish before the
  // transaction starts (on SQLite they would queue behind it), its CPU work runs on meanwhile.
  // A precompute that fails is as good as none: `run` does the work (and fails) itself.
  const precomputed = await handler
    .precompute?.(
      { service, registry, now: service.now(), organization, caller, activityId },
      parameters as never,
    )
    .catch(() => undefined)

  // The decision on this activity, taken in `tx` (a dry run below, then for real).
  const decide = (tx: Transaction, row: ActivityRow) =>
    decideActivity({ tx, service, row, organization, caller, handler, parameters, vouched })

  // Work that must not hold a transaction (outbound calls, OTP budgets) runs first, and only for
  // an activity the decision would allow: the decision is taken in a transaction that is rolled
  // back, then taken again for real below (with whatever changed meanwhile).
  let prepared: { value?: unknown; error?: unknown } | undefined
  if (handler.prepare) {
    const verdict = await service.store
      .transaction(async (tx) => {
        if ((await tx.findBy('activities', 'fingerprint', fingerprint))[0]) throw new DryRun('replay')
        const row = provisional(service.now())
        const decision = await decide(tx, row)
        throw new DryRun(decision.outcome)
      })
      .catch((error: unknown) => {
        if (error instanceof DryRun) return error.verdict
        throw error
      })
    if (verdict === 'OUTCOME_ALLOW') {
      try {
        prepared = {
          value: await handler.prepare(
            { service, registry, now: service.now(), organization, caller, activityId },
            parameters as never,
          ),
        }
      } catch (error) {
        // A storage outage is the request's failure, not the activity's: nothing is recorded.
        if (
          (error instanceof ApiError && error.errorCode === 'STORAGE_UNAVAILABLE') ||
          isDatabaseError(error)
        )
          throw error
        prepared = { error }
      }
    }
  }

  // An exact replay of a signed request answers with the activity it created. On PostgreSQL a
  // SERIALIZABLE transaction that read the fingerprint index would conflict with every concurrent
  // activity inserted into it, so the first run does not look: a replay (or a concurrent
  // duplicate) fails on the unique index when its row is inserted, and the rerun looks.
  const outcome = await service.store.transaction(async (tx): Promise<Execution> => {
    const replay =
      tx.backend.checksReplayFirst || tx.attempt > 1
        ? (await tx.findBy('activities', 'fingerprint', fingerprint))[0]
        : undefined
    if (replay) {
      const error = storedError(replay)
      return { row: replay, ...(error ? { error } : {}) }
    }
    // The row is written once, with its outcome, at the end of this transaction (every branch
    // below puts it); nothing in between reads it back.
    const row = provisional(service.now())
    const decision = await decide(tx, row)
    const decided = async (): Promise<Execution> => {
      switch (decision.outcome) {
        case 'OUTCOME_ALLOW':
          return executeActivity(
            tx,
            service,
            registry,
            row,
            organization,
            caller,
            parameters,
            prepared,
            precomputed,
          )
        case 'OUTCOME_REQUIRES_CONSENSUS':
          return { row: await tx.put('activities', { ...row, status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED' }) }
        default: {
          const failed = await tx.put('activities', {
            ...row,
            status: 'ACTIVITY_STATUS_FAILED',
            failure: decision.error.toBody() as ActivityRow['failure'] & object,
          })
          return { row: failed, error: decision.error }
        }
      }
    }
    const execution = await decided()
    // A new activity has no votes but those this transaction cast: the answer needs no lookup.
    return execution.row.id === row.id && !execution.respondWith && !tx.wrote('votes')
      ? { ...execution, votes: [] }
      : execution
  })
  if (outcome.error) throw outcome.error
  const shown = outcome.respondWith
    ? (await service.store.get('activities', outcome.respondWith))!
    : outcome.row
  return {
    activity: await renderActivity(
      service.store,
      shown,
      caller,
      outcome.respondWith ? undefined : outcome.votes,
    ),
  }
}

/** Carries the dry-run decision out of the transaction it rolls back. */
class DryRun extends Error {
  constructor(readonly verdict: string) {
    super('dry run')
  }
}
