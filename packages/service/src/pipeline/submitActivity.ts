import {
  ACTIVITIES,
  type Activity,
  type ActivityPath,
  type ErrorCode,
  PROXY_NONCE_HEADER,
  SESSION_KEY_MESSAGES,
  SIGNATURE_SCHEMES,
} from '@latchkey/protocol'
import {
  ApiError,
  AuthenticationError,
  FieldError,
  NotFoundError,
  PermissionError,
} from '../kernel/base/errors.ts'
import { requestFingerprint } from '../kernel/Caller.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ActivityHandler, Caller, PolicyFactFields, PolicyFacts, Registry } from '../kernel/registry.ts'
import type { ActivityRow, OrganizationRow } from '../kernel/store/model.ts'
import { isExpired } from '../kernel/store/model.ts'
import { isDatabaseError, type Lookup, type Reads, type Transaction } from '../kernel/store/Store.ts'
import { recordActivityEvents } from './activityEvents.ts'
import { type AdmissionRules, admit, type PublicRequest } from './admit.ts'
import { checkTimestamp } from './checkTimestamp.ts'
import { type Decision, decideActivity, type PendingFacts, recordEvaluation } from './decideActivity.ts'
import {
  type Execution,
  emitReported,
  emptied,
  executeActivity,
  type Prepared,
  prepareContext,
  putActivity,
  shownTo,
} from './executeActivity.ts'
import { confinedBy, heldBy } from './gates.ts'
import { renderActivity } from './renderActivity.ts'

export interface SubmitOutcome {
  activity: Activity
}

/** The error an activity failed with, as stored on its row. */
const storedError = (row: ActivityRow): ApiError | undefined =>
  row.failure
    ? new ApiError(
        row.failure.details.errorCode as ErrorCode,
        row.failure.message,
        row.failure.details.field as string | undefined,
      )
    : undefined

/**
 * How an activity is let in: its body names the activity's type and is live, and the caller acts in
 * its own organization, or (where the handler allows it) as a parent organization's user in a
 * sub-organization, or as a sub-organization's user naming its parent.
 */
const activityRules: AdmissionRules<ActivityHandler> = {
  kind: 'activity',
  handlerOf: (registry, path) =>
    ACTIVITIES[path as ActivityPath]
      ? (registry.activities.get(path as ActivityPath) as ActivityHandler | undefined)
      : undefined,
  lookupsOf({ path, handler, organizationId, json }) {
    // What a snapshot run decides on: the organization's policies, and what the handler reads.
    if (!runsOnSnapshot(path, handler)) return []
    return [
      { table: 'policies', field: 'organizationId', value: organizationId },
      ...(handler.lookups?.(organizationId, json.parameters) ?? []),
    ]
  },
  checkBody(runtime, body, path) {
    const { types } = ACTIVITIES[path as ActivityPath]
    const type = body.string('type', { max: 200 })
    if (!(types as readonly string[]).includes(type))
      throw new FieldError({
        code: 'ACTIVITY_TYPE_MISMATCH',
        field: 'type',
        reason: `must be ${types.join(' or ')} for ${path}, got ${type}`,
      })
    checkTimestamp(runtime, body)
  },
  async organizationOf({ path, handler, caller, named, reads }) {
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
      throw new PermissionError({
        field: 'organizationId',
        message: fromParent
          ? `${path} must be submitted by a user of organization ${organization.id}, not by its parent organization`
          : `your key belongs to organization ${caller.organizationId}, not ${organization.id}`,
      })
    return organization
  },
}

/**
 * An activity whose transaction may be a snapshot run (`Store.transaction`'s `snapshot`): it writes
 * nothing but its own record (read-only) or new rows (`createsOnly`), and the fingerprint's unique
 * index, not a SERIALIZABLE read, keeps a replay from running twice.
 */
const runsOnSnapshot = (path: string, handler: ActivityHandler) =>
  ACTIVITIES[path as ActivityPath].readOnly || Boolean(handler.createsOnly)

/**
 * The organization a snapshot run's rows go in only while it exists (`Store.transaction`'s
 * `owner`): a new activity's that creates rows (`createsOnly`: a wallet) in a sub-organization,
 * the one kind `delete_sub_organization` deletes. Its run decides on the organization as admission
 * read it and reads nothing a deletion writes: without it, one in flight while the sub-organization
 * is deleted would answer COMPLETED with a wallet left behind in no organization, made past the
 * deletion's export guard (`deleteWithoutExport`). A read-only activity writes only its record,
 * which the deletion keeps; a top-level organization is never deleted.
 */
const ownedBy = ({ handler, organization }: Submission): { owner?: string } =>
  handler.createsOnly && organization.parentOrganizationId !== undefined ? { owner: organization.id } : {}

/** An admitted activity, as the phases after admission see it. */
interface Submission {
  runtime: Runtime
  registry: Registry
  path: string
  /** The type constant as sent: the current one or an older one the path still accepts. */
  type: string
  handler: ActivityHandler
  caller: Caller
  /** The organization it acts in. */
  organization: OrganizationRow
  /** The `parameters` object as sent, recorded as the activity's intent. */
  intent: Record<string, unknown>
  /** The parameters as the handler parsed them. */
  parameters: unknown
  /** A plugin vouches for the caller on this path (`ServicePlugin.vouchesFor`). */
  vouched: boolean
  /** The request's committed reads (`requestReads`). */
  reads: Reads
  fingerprint: string
  activityId: string
  /** The last decision taken in the activity's transaction (`REPLAY`: it found the first one). */
  outcome?: string
}

/**
 * `POST /public/v1/submit/<path>` after the body was read: admit it (authenticated against the raw
 * bytes; type, liveness, organization), parse the parameters once, start its key work, prepare it
 * outside any transaction if the decision would allow it, then in one transaction record the
 * activity, decide on it and run it (or leave it awaiting consensus), and answer with it.
 */
export async function submitActivity(
  runtime: Runtime,
  registry: Registry,
  request: PublicRequest,
): Promise<SubmitOutcome> {
  const { timings } = runtime
  const { handler, caller, organization, body, reads } = await timings.time('admit', () =>
    admit(runtime, registry, activityRules, request),
  )
  const { path } = request
  const intent = body.object('parameters')
  const type = body.string('type', { max: 200 })
  const parameters = handler.parse(intent, type)
  const vouched = await vouchedFor(runtime, registry, { path, caller, organization, reads })
  const fingerprint = await fingerprintOf(runtime, registry, caller, request)
  const submission: Submission = {
    runtime,
    registry,
    path,
    type,
    handler,
    caller,
    organization,
    intent: intent.value,
    parameters,
    vouched,
    reads,
    fingerprint,
    activityId: runtime.newId(),
  }
  // Key work and `prepare` (outbound calls) go on together; the transaction starts once both are
  // done, so it never holds a commit group (SQLite's one connection) while a crypto job queues.
  const precomputing = timings.time('precompute', () => precompute(submission))
  const prepared = await prepare(submission)
  const precomputed = await precomputing
  const facts = factsOf(submission, prepared)
  const execution = await timings.time('transaction', () =>
    record(submission, { prepared, precomputed, ...(facts ? { facts } : {}) }),
  )
  emitReported(runtime, execution.reported)
  const errorCode = execution.row.failure?.details.errorCode
  runtime.emit('activity.recorded', {
    type: path,
    status: execution.row.status,
    outcome: submission.outcome ?? 'UNKNOWN',
    ...(typeof errorCode === 'string' ? { errorCode } : {}),
  })
  return answer(submission, execution)
}

/** True when a plugin vouches for the caller on this path (`ServicePlugin.vouchesFor`); every plugin is asked. */
async function vouchedFor(
  runtime: Runtime,
  registry: Registry,
  request: { path: string; caller: Caller; organization: OrganizationRow; reads: Reads },
): Promise<boolean> {
  let vouched = false
  for (const plugin of registry.plugins) if (await plugin.vouchesFor?.(request, runtime)) vouched = true
  return vouched
}

/**
 * The fingerprint binds the body to the key that stamped it (`signerOf`: the key, whichever row
 * holds it now): the same bytes from the same key are a replay, the same bytes from another root
 * user are a distinct activity. A
 * plugin's own user (the auth proxy, whose key never leaves the service) may add a nonce, so two
 * instances forwarding identical calls in one millisecond make two activities; anyone else's
 * nonce header is ignored, so it cannot turn a replay into a new activity.
 */
async function fingerprintOf(
  runtime: Runtime,
  registry: Registry,
  caller: Caller,
  { headers, bytes }: PublicRequest,
): Promise<string> {
  const nonceHeader = headers.get(PROXY_NONCE_HEADER)
  let owned = false
  if (nonceHeader)
    for (const plugin of registry.plugins) if (await plugin.ownsCaller?.(caller, runtime)) owned = true
  const nonce = owned ? (nonceHeader ?? '') : ''
  return requestFingerprint(caller.credential, bytes, nonce)
}

/** What the phases before the transaction hand it: `prepare`'s result and `precompute`'s. */
interface Ready {
  prepared?: Prepared
  precomputed?: unknown
  /** What `prepare` fixed that policies read (`ActivityHandler.policyFacts`). */
  facts?: PolicyFacts
}

/** The facts policies read of what `prepare` gave (none when it failed or the handler has none). */
function factsOf({ runtime, handler }: Submission, prepared: Prepared | undefined): PolicyFacts | undefined {
  if (!handler.policyFacts || prepared === undefined || prepared.error !== undefined) return undefined
  return handler.policyFacts(runtime, prepared.value)
}

/** The activity's row before its outcome is known. */
const provisional = (submission: Submission, now: number): ActivityRow => ({
  id: submission.activityId,
  organizationId: submission.organization.id,
  path: submission.path,
  type: submission.type,
  status: 'ACTIVITY_STATUS_CREATED',
  // A one-time code the handler reads is not kept in the record (`secretParameters`).
  intent: submission.handler.secretParameters
    ? emptied(submission.intent, submission.handler.secretParameters)
    : submission.intent,
  fingerprint: submission.fingerprint,
  userId: submission.caller.userId,
  credentialId: submission.caller.credential.id,
  callerOrganizationId: submission.caller.organizationId,
  createdAt: now,
  updatedAt: now,
})

/** What a gate is asked about the new activity. */
const gateInput = (submission: Submission, tx: Transaction, row: ActivityRow, facts?: PolicyFacts) => ({
  tx,
  runtime: submission.runtime,
  row,
  organization: submission.organization,
  caller: submission.caller,
  ...(facts ? { facts } : {}),
})

/**
 * The decision on the activity, taken in `tx` (a dry run before `prepare`, with the facts it will
 * fix `pending`, then for real, with what `prepare` fixed that policies read): a plugin confining
 * its caller (a session profile's scope) refuses it first, whoever the caller is. The confinement
 * judges the facts too: pending in the dry run, and for real when the dry run did not let it be
 * prepared (`unprepared`: refused, or waiting for consensus, judged again with them when let run),
 * it refuses only what no facts could let through. Its "maybe" is its own: what prepares the
 * activity is the policies' dry run (`PendingFacts.read`), never the confinement's.
 */
async function decide(
  submission: Submission,
  tx: Transaction,
  row: ActivityRow,
  {
    facts,
    pending,
    unprepared,
  }: { facts?: PolicyFacts | undefined; pending?: PendingFacts; unprepared?: PolicyFactFields } = {},
): Promise<Decision> {
  const pendingFacts = pending?.fields ?? unprepared
  const refusal = await confinedBy(submission.registry, {
    ...gateInput(submission, tx, row, facts),
    ...(pendingFacts ? { pendingFacts } : {}),
  })
  if (refusal) {
    await recordEvaluation(tx, submission.runtime, row, { outcome: 'OUTCOME_DENY_EXPLICIT' })
    return { outcome: 'OUTCOME_DENY_EXPLICIT', error: refusal }
  }
  return decideActivity({
    ...submission,
    tx,
    row,
    ...(facts ? { facts } : {}),
    ...(pending ? { pending } : {}),
  })
}

/**
 * Key work the transaction would otherwise wait on, done before it: its reads finish before the
 * transaction starts (on SQLite they would queue behind it), and so does its CPU work (a
 * transaction awaiting a crypto job would hold its commit group, and the connection, meanwhile).
 * A precompute that fails is as good as none: `run` does the work (and fails) itself.
 */
async function precompute(submission: Submission): Promise<unknown> {
  return submission.handler
    .precompute?.(prepareContext(submission), submission.parameters as never)
    .catch(() => undefined)
}

/**
 * Work that must not hold a transaction (outbound calls, OTP budgets) runs first, and only for
 * an activity the decision would allow: the decision is taken in a transaction that is rolled
 * back, then taken again for real when the activity is recorded (with whatever changed meanwhile).
 * An activity whose policies read what `prepare` fixes (`ActivityHandler.policyFacts`: a send's
 * fee) is decided on with those facts, which are what it runs with: its dry run has them pending
 * (`PendingFacts`), and it is prepared when that dry run allows it or when a policy read them (the
 * facts may change the decision); refused whatever they are (a session profile's scope false for
 * any of them, a matching DENY that read none, no policy reading them and none allowing it), it is
 * not: a caller refused makes no outbound call. A scope that may hold with the facts (it reads
 * them: `GateInput.pendingFacts`) lets the policies' dry run decide, and is judged with them after.
 */
async function prepare(submission: Submission): Promise<Prepared | undefined> {
  const { runtime, handler, fingerprint } = submission
  if (!handler.prepare) return undefined
  if (
    handler.prepares &&
    !(await handler.prepares(prepareContext(submission), submission.parameters as never))
  )
    return { value: undefined }
  const pending: PendingFacts | undefined = handler.policyFacts
    ? { fields: pendingFieldsOf(handler), read: false }
    : undefined
  const verdict = await runtime.store
    .transaction(async (tx) => {
      if ((await tx.findBy('activities', 'fingerprint', fingerprint))[0]) throw new DryRun('replay')
      const row = provisional(submission, runtime.now())
      const decision = await decide(submission, tx, row, pending ? { pending } : {})
      // Its facts may change a decision that read them (not a matching DENY: reading them fails
      // a policy's evaluation), and the gates judge them: it is prepared before either.
      if (pending && decision.outcome !== 'OUTCOME_DENY_EXPLICIT' && pending.read)
        throw new DryRun('OUTCOME_ALLOW')
      // An activity a gate holds is not prepared: it runs later, if ever, without it.
      if (
        !pending &&
        decision.outcome === 'OUTCOME_ALLOW' &&
        (await heldBy(submission.registry, gateInput(submission, tx, row)))
      )
        throw new DryRun('HELD')
      throw new DryRun(decision.outcome)
    })
    .catch((error: unknown) => {
      if (error instanceof DryRun) return error.verdict
      throw error
    })
  if (verdict !== 'OUTCOME_ALLOW') return undefined
  return prepareNow(submission)
}

/**
 * The facts a handler with `policyFacts` fixes in `prepare`, named before it runs. Without
 * `policyFactFields`, none: a policy or a scope reading its facts fails before it as it would
 * without them, and it is prepared only when allowed without them.
 */
const pendingFieldsOf = (handler: ActivityHandler): PolicyFactFields =>
  handler.policyFactFields ?? { ethTx: [] }

/** The handler's `prepare`, its throw kept for the run (a storage outage excepted). */
async function prepareNow(submission: Submission): Promise<Prepared> {
  const { handler } = submission
  try {
    return { value: await handler.prepare!(prepareContext(submission), submission.parameters as never) }
  } catch (error) {
    // A storage outage is the request's failure, not the activity's: nothing is recorded.
    if ((error instanceof ApiError && error.errorCode === 'STORAGE_UNAVAILABLE') || isDatabaseError(error))
      throw error
    return { error }
  }
}

/**
 * The activity's transaction: an exact replay of a signed request answers with the activity it
 * created; a new activity is decided on and run, left awaiting consensus, or refused.
 */
async function record(submission: Submission, ready: Ready): Promise<Execution> {
  const { runtime, fingerprint } = submission
  // On PostgreSQL a SERIALIZABLE transaction that read the fingerprint index would conflict with
  // every concurrent activity inserted into it, so the first run does not look: a replay (or a
  // concurrent duplicate) fails on the unique index when its row is inserted, and the rerun looks.
  const { keys, lookups } = await serializedOn(submission)
  const onSnapshot = runsOnSnapshot(submission.path, submission.handler)
  // An ordered snapshot run (a signing under a spending limit, on PostgreSQL): it reads as of its
  // snapshot after its locks.
  const aheadOfLock = onSnapshot && keys.length > 0
  // The store queues this process's transactions of the same locks and runs the ones that queued
  // meanwhile as one group (one lock, begin and commit for all of them; `Store.transaction`'s
  // `locks`), so that at most one of its connections waits for a lock.
  return runtime.store.transaction(
    async (tx): Promise<Execution> => {
      const replay =
        tx.backend.checksReplayFirst || tx.attempt > 1
          ? (await tx.findBy('activities', 'fingerprint', fingerprint))[0]
          : undefined
      if (replay) {
        submission.outcome = 'REPLAY'
        const error = storedError(replay)
        return {
          row: replay,
          ...(replay.respondsWith ? { respondWith: replay.respondsWith } : {}),
          ...(error ? { error } : {}),
        }
      }
      // The row is written once, with its outcome, at the end of this transaction (every branch
      // below puts it); nothing in between reads it back.
      const row = provisional(submission, runtime.now())
      // The caller's credential as this transaction sees it (`credentialGone`): not on a
      // snapshot run of the request's reads, which decides as of admission throughout; in any
      // transaction that reads its policies as they are now, as of that read: an ordered one's
      // snapshot after the lock, SQLite's transaction, or a snapshot run's rerun in a database
      // transaction. Admission's key with the policies of later would otherwise sign with a key
      // deleted in flight under an ALLOW added after it, a state no moment had.
      const gone = tx.onSnapshot ? undefined : await credentialGone(tx, submission)
      // The organization (its root users and quorum) likewise, as of the same read
      // (`organizationNow`): an ordered run's snapshot after the lock, or the transaction (a send,
      // whose limits its transaction reads under the spend lock), not as admission read it.
      const refusal = gone ?? (tx.onSnapshot ? undefined : await organizationNow(tx, submission))
      const execution = refusal
        ? await refused(submission, tx, row, refusal)
        : await decideAndRun(submission, tx, row, ready)
      await recordActivityEvents(runtime, tx, {
        row: execution.row,
        organization: submission.organization,
        outcome: submission.outcome,
      })
      // A new activity has no votes but those this transaction cast: the answer needs no lookup.
      return execution.row.id === row.id && !execution.respondWith && !tx.wrote('votes')
        ? { ...execution, votes: [] }
        : execution
    },
    {
      // An activity content with a snapshot that a plugin orders (a signing under a spending
      // limit, whose one write beyond new rows is the usage row every writer rewrites under the
      // lock) reads one snapshot taken under its locks, without SERIALIZABLE's predicate locks:
      // it cannot fail another organization's commit, nor be rerun for one (`isolation`). Its
      // snapshot is not the request's reads, which were read before the lock.
      ...(onSnapshot && keys.length === 0 ? { snapshot: submission.reads, ...ownedBy(submission) } : {}),
      // What the plugins that order it read (a spending limit's rows) and what its decision and
      // run rest on (the caller's credential and user, the organization, the policies, the
      // signer: `decisionLookups`) come from one statement after the lock, as of that snapshot
      // (`readAhead`); none from the request's reads, made before the lock. Its writes go as one
      // statement before its commit.
      ...(aheadOfLock ? { isolation: 'snapshot' as const, readAhead: lookups } : {}),
      // The same order across the database's other processes (PostgreSQL's advisory locks).
      locks: keys,
    },
  )
}

/**
 * The keys the plugins order this activity's transaction on (most activities: none), and what
 * those plugins read in it after the lock (`serializedLookups`). None where
 * one connection runs every transaction in turn (SQLite's commit groups): nothing conflicts there,
 * and waiting for a turn would only split the groups.
 */
async function serializedOn({
  runtime,
  registry,
  path,
  handler,
  caller,
  organization,
  intent,
  reads,
}: Submission): Promise<{ keys: string[]; lookups: Lookup[] }> {
  const keys: string[] = []
  const lookups: Lookup[] = []
  if (runtime.store.backend.groupsCommits) return { keys, lookups }
  for (const plugin of registry.plugins) {
    const key = await plugin.serializes?.({ path, organization, reads })
    if (key === undefined) continue
    keys.push(key)
    lookups.push(...(plugin.serializedLookups?.(organization.id) ?? []))
  }
  if (keys.length > 0)
    lookups.push(...decisionLookups({ registry, handler, caller, intent }, organization.id))
  return { keys, lookups }
}

/**
 * What an ordered snapshot run's decision and run rest on besides what its plugins order, read
 * after the lock with it: the caller's credential and user (`credentialGone`), the organization
 * (its root users and quorum: `organizationNow`), its policies and user tags (`decideActivity`),
 * what the handler reads (the signer's wallet account, by `signWith`) and what the plugins read
 * (the MFA policies its gate holds it by, the webhook endpoints its events go to): everything
 * admission read but the credential by public key. Read before the lock, with the limits read
 * after it, the run would decide on a state nobody committed: an agent's key and ALLOW policy
 * from before its revoke, "no limit" from after it, and sign any amount uncounted; a root user
 * (or a quorum of 1) from before a change of the root set, "no limit" from after the limit that
 * change made pointless was deleted; the cold wallet's account from before its deletion, "no
 * wallet" (a DENY on `wallet.label` that errors) from after. One snapshot for all of them decides
 * as of one moment: the limit's usage rows are written under the lock, and no moment has the key
 * (or root user) without the limit. Nothing of it is answered from the reads made before the lock.
 */
const decisionLookups = (
  { registry, handler, caller, intent }: Pick<Submission, 'registry' | 'handler' | 'caller' | 'intent'>,
  organizationId: string,
): Lookup[] => [
  { table: 'organizations', id: organizationId },
  { table: 'policies', field: 'organizationId', value: organizationId },
  { table: 'userTags', field: 'organizationId', value: organizationId },
  { table: 'users', id: caller.userId },
  { table: caller.credential.kind === 'WEBAUTHN' ? 'authenticators' : 'apiKeys', id: caller.credential.id },
  ...(handler.lookups?.(organizationId, intent) ?? []),
  ...registry.plugins.flatMap((plugin) => plugin.lookups?.(organizationId) ?? []),
]

/**
 * Takes the organization as the activity's transaction reads it (an ordered snapshot run: its
 * snapshot after the lock, with its limits, `decisionLookups`) into `submission`, or the refusal
 * when it is gone. Admission's row was read before: a root user taken out of the root set, or the
 * quorum raised, then the limit that change made pointless deleted, would otherwise be decided on
 * with the old root set and no limit (100 ETH signed, or sent, by one root user alone, uncounted),
 * a state no moment had. Every run but a snapshot run of the request's reads (which decides as of
 * admission throughout) takes it.
 */
async function organizationNow(tx: Transaction, submission: Submission): Promise<ApiError | undefined> {
  const { id } = submission.organization
  const organization = await tx.get('organizations', id)
  if (!organization)
    return new NotFoundError({ code: 'ORGANIZATION_NOT_FOUND', message: `organization ${id} not found` })
  submission.organization = organization
  return undefined
}

/** Decides on the new activity in `tx` and acts on the decision. */
async function decideAndRun(
  submission: Submission,
  tx: Transaction,
  row: ActivityRow,
  ready: Ready,
): Promise<Execution> {
  const { handler } = submission
  // Not prepared (its dry run refused it, or left it waiting): its facts are still pending.
  const unprepared =
    handler.policyFacts && ready.prepared === undefined ? pendingFieldsOf(handler) : undefined
  const decision = await decide(submission, tx, row, {
    facts: ready.facts,
    ...(unprepared ? { unprepared } : {}),
  })
  submission.outcome = decision.outcome
  switch (decision.outcome) {
    case 'OUTCOME_ALLOW': {
      // Not allowed in its dry run whatever its facts, so not prepared, and allowed now (a policy
      // or a profile changed meanwhile): it would be judged without them, and prepared in here.
      if (unprepared) return refused(submission, tx, row, changedMeanwhile())
      // A plugin's gate (MFA) may hold an allowed activity until more is proven.
      const gate = await heldBy(submission.registry, gateInput(submission, tx, row, ready.facts))
      if (gate) return { row: await putActivity(tx, submission.registry, { ...row, status: gate.status }) }
      return executeActivity({ ...submission, ...ready, tx, row })
    }
    case 'OUTCOME_REQUIRES_CONSENSUS':
      return {
        row: await putActivity(tx, submission.registry, {
          ...row,
          status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED',
        }),
      }
    default:
      return refused(submission, tx, row, decision.error)
  }
}

/**
 * A send (an activity with `policyFacts`) its dry run did not allow whatever its facts, so not
 * prepared, that its decision allows now: a policy or session profile changed in between. It is
 * refused rather than judged without its facts; submitted again, it is prepared and judged with them.
 */
const changedMeanwhile = () =>
  new PermissionError({
    message: 'the policies or session profile deciding it changed while it was submitted: submit it again',
  })

/** The new activity refused with `error`: it has ended, and its record keeps no parameter it clears when done. */
async function refused(
  submission: Submission,
  tx: Transaction,
  row: ActivityRow,
  error: ApiError,
): Promise<Execution> {
  const failed = await putActivity(tx, submission.registry, {
    ...row,
    status: 'ACTIVITY_STATUS_FAILED',
    failure: error.toBody() as ActivityRow['failure'] & object,
  })
  return { row: failed, error }
}

/**
 * The refusal a new request would get for the caller's credential as `tx` sees it, or undefined
 * while it stands. Admission checked it before the transaction; a logout (the session key
 * deleted), a passkey removed or a key expiring in between would otherwise let the request run
 * as a credential that is gone, and mint from it a session or a key that outlives the logout
 * (`stamp_login` by a thief's copy of the session key while its owner signs out). It is read in
 * the activity's own transaction: on PostgreSQL a SERIALIZABLE one, so a removal committed
 * concurrently, on any instance, comes either before it (this finds the row gone) or after it
 * (the activity ran while the credential stood, as one sent a moment earlier would have); where
 * the two interleave, the database fails one of them and it reruns. The activity is recorded
 * failed with the refusal, as a waiting one whose submitter is gone is (`submitterOf`).
 *
 * A snapshot run of the request's reads does not look (signing stays one statement): it reads
 * them, as of admission, and writes new rows only; what it makes does not outlive the credential
 * either (a read-only session is bound to the key that asked for it, `createReadOnlySession`).
 * Every other run looks, as of the read its policies and limits come from: an ordered one (a
 * signing under a spending limit) in the statement after the lock that reads its limits
 * (`decisionLookups`), so its decision is of one moment; on SQLite, and a snapshot run's rerun,
 * in its transaction (one row, from the read cache unless a commit wrote its table since).
 */
async function credentialGone(
  tx: Transaction,
  { runtime, caller }: Submission,
): Promise<ApiError | undefined> {
  const { credential, userId } = caller
  const notFound = () =>
    new AuthenticationError({ code: 'PUBLIC_KEY_NOT_FOUND', message: SESSION_KEY_MESSAGES.notFound })
  if (credential.kind === 'WEBAUTHN')
    return (await tx.get('authenticators', credential.id))?.userId === userId ? undefined : notFound()
  // Only an `X-Stamp` names a stored key (its schemes are the API keys'). A token-attested stamp
  // (`stamp_login`'s `X-Stamp-Attested`) or another plugin's stamp vouches for a user: its user.
  const stored = (SIGNATURE_SCHEMES as readonly string[]).includes(credential.scheme)
  if (credential.kind === 'API_KEY' && stored) {
    const key = await tx.get('apiKeys', credential.id)
    if (key?.userId !== userId) return notFound()
    return isExpired(key, runtime.now())
      ? new AuthenticationError({ code: 'API_KEY_EXPIRED', message: SESSION_KEY_MESSAGES.expired })
      : undefined
  }
  return (await tx.get('users', userId)) ? undefined : notFound()
}

/** The answer: the activity as its submitter sees it (a vote answers with the activity voted on). */
async function answer({ runtime, registry, caller }: Submission, outcome: Execution): Promise<SubmitOutcome> {
  if (outcome.error) throw outcome.error
  const shown = outcome.respondWith
    ? (outcome.respondWithRow ?? (await runtime.store.get('activities', outcome.respondWith))!)
    : outcome.row
  return {
    activity: await renderActivity(
      runtime.store,
      // What is shown once reaches its submitter only, made again for a replay (`shownTo`).
      await shownTo({ runtime, registry, reads: runtime.store }, shown, caller),
      { viewer: caller, knownVotes: outcome.respondWith ? undefined : outcome.votes, now: runtime.now() },
    ),
  }
}

/** Carries the dry-run decision out of the transaction it rolls back. */
class DryRun extends Error {
  constructor(readonly verdict: string) {
    super('dry run')
  }
}
