// Session profiles (issue 37): create_session_profile (the published shape), its Latchkey update
// and delete, the published queries get_session_profile and get_session_profiles, and the
// confinement (`ServicePlugin.confine`) that holds every activity of a session issued under a
// profile to its scope. The activities are decided like any other (root quorum, or a policy naming
// `activity.resource == 'POLICY'`): a session or agent key cannot create, widen or remove one.
import { ACTIVITIES, type ActivityPath, type SessionProfile } from '@latchkey/protocol'
import { type DeletedProfile, endSessionsOfDeletedProfile } from '../domain/sessions.ts'
import {
  type ApiError,
  ConflictError,
  FieldError,
  LimitError,
  NotFoundError,
  PermissionError,
} from '../kernel/base/errors.ts'
import { timestampOf } from '../kernel/base/ids.ts'
import { decodeTransactionForPolicy } from '../kernel/crypto/signTransaction.ts'
import type { JobHandler } from '../kernel/JobQueue.ts'
import type { Reader } from '../kernel/Reader.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import { defineActivity, defineQuery, type GateInput, type PolicyFactFields } from '../kernel/registry.ts'
import type { SessionProfileRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Reads.ts'
import { isOwnLogout, withPending } from '../pipeline/decideActivity.ts'
import type { Expr } from '../policies/ast.ts'
import { evaluateExpression, type PolicyScope } from '../policies/evaluateExpression.ts'
import { type DecisionBudget, decisionBudget, parseCondition } from '../policies/evaluatePolicies.ts'
import { POLICY_LIMITS } from '../policies/limits.ts'
import { policyContextsOf } from '../policies/policyContextOf.ts'
import { readExpression } from '../policies/readPolicyParams.ts'

/** Most session profiles per organization. */
export const MAX_SESSION_PROFILES = 100
/** Longest session a profile may give: 30 days, as a login. */
const MAX_PROFILE_SECONDS = 30 * 24 * 3600

/**
 * What a session issued under a profile never does, whatever its scope says: manage policies,
 * limits, profiles, users, credentials, logins and sessions (a new session would shed the
 * profile), or the organization; export or import a key; approve or reject an activity (a vote
 * that lets another's activity run, or stops it). The one credential activity it may run is
 * deleting its own key, its logout (`isOwnLogout`).
 */
export const NEVER_RESOURCES: ReadonlySet<string> = new Set([
  'POLICY',
  'AUTH',
  'CREDENTIAL',
  'USER',
  'ORGANIZATION',
])
export const NEVER_ACTIONS: ReadonlySet<string> = new Set(['EXPORT', 'IMPORT', 'APPROVE', 'REJECT'])

const readName = (r: Reader) => r.string('sessionProfileName', { max: 100 })

/** The scope: a non-empty policy-language condition (a syntax error is a 400 naming its position). */
function readScope(r: Reader): string {
  const scope = readExpression(r, 'scope', 'condition')
  if (scope === undefined || scope.trim() === '')
    throw new FieldError({
      field: r.field('scope'),
      reason: `must be a policy condition (e.g. "activity.action == 'SIGN'"), not empty`,
    })
  return scope
}

const readExpiration = (r: Reader) => r.optUintString('expirationSeconds', { max: MAX_PROFILE_SECONDS })
const readNotes = (r: Reader) => r.optString('notes', { min: 0, max: 1000 })

export async function findSessionProfile(
  reads: Reads,
  organizationId: string,
  id: string,
  field = 'parameters.sessionProfileId',
): Promise<SessionProfileRow> {
  const profile = await reads.get('sessionProfiles', id)
  if (!profile || profile.organizationId !== organizationId)
    throw new NotFoundError({
      code: 'SESSION_PROFILE_NOT_FOUND',
      field,
      message: `session profile ${id} not found in organization ${organizationId}`,
    })
  return profile
}

async function checkUniqueName(reads: Reads, organizationId: string, name: string, except?: string) {
  const profiles = await reads.findBy('sessionProfiles', 'organizationId', organizationId)
  if (profiles.some((profile) => profile.name === name && profile.id !== except))
    throw new ConflictError({
      field: 'parameters.sessionProfileName',
      message: `organization ${organizationId} already has a session profile named '${name}'`,
    })
  return profiles
}

export const createSessionProfile = defineActivity('create_session_profile', {
  parse: (r) => {
    const expirationSeconds = readExpiration(r)
    const notes = readNotes(r)
    return {
      sessionProfileName: readName(r),
      scope: readScope(r),
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
      ...(notes !== undefined ? { notes } : {}),
    }
  },
  run: async (ctx, p) => {
    const existing = await checkUniqueName(ctx.tx, ctx.organization.id, p.sessionProfileName)
    if (existing.length >= MAX_SESSION_PROFILES)
      throw new LimitError({
        message: `organization ${ctx.organization.id} has ${MAX_SESSION_PROFILES} session profiles, the most it may have`,
        field: 'parameters',
      })
    const id = ctx.newId()
    await ctx.tx.put('sessionProfiles', {
      id,
      organizationId: ctx.organization.id,
      name: p.sessionProfileName,
      scope: p.scope,
      ...(p.expirationSeconds !== undefined ? { expirationSeconds: p.expirationSeconds } : {}),
      ...(p.notes !== undefined ? { notes: p.notes } : {}),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    return { sessionProfileId: id }
  },
})

export const updateSessionProfile = defineActivity('latchkey_update_session_profile', {
  parse: (r) => {
    const sessionProfileName = r.has('sessionProfileName') ? readName(r) : undefined
    const scope = r.has('scope') ? readScope(r) : undefined
    const expirationSeconds = readExpiration(r)
    const notes = readNotes(r)
    return {
      sessionProfileId: r.string('sessionProfileId', { max: 200 }),
      ...(sessionProfileName !== undefined ? { sessionProfileName } : {}),
      ...(scope !== undefined ? { scope } : {}),
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
      ...(notes !== undefined ? { notes } : {}),
    }
  },
  // Under MFA, held: any new scope but `false` (no scope can be judged narrower than another, and
  // the sessions already issued take the new one at once), and a longer life (or a first one, over
  // what each login asked) for the sessions it gives. Narrowing to `false` in an emergency, a new
  // name or notes, a shorter life: at once.
  loosensGuard: async (reads, organizationId, p) => {
    const profile = await reads.get('sessionProfiles', p.sessionProfileId)
    if (!profile || profile.organizationId !== organizationId) return false
    const widened = p.scope !== undefined && p.scope.trim() !== 'false' && p.scope !== profile.scope
    const longer =
      p.expirationSeconds !== undefined &&
      (profile.expirationSeconds === undefined ||
        BigInt(p.expirationSeconds) > BigInt(profile.expirationSeconds))
    return widened || longer
  },
  run: async (ctx, p) => {
    const profile = await findSessionProfile(ctx.tx, ctx.organization.id, p.sessionProfileId)
    if (p.sessionProfileName !== undefined)
      await checkUniqueName(ctx.tx, ctx.organization.id, p.sessionProfileName, profile.id)
    // The new scope holds for the sessions already issued: they read it on every activity.
    await ctx.tx.put('sessionProfiles', {
      ...profile,
      name: p.sessionProfileName ?? profile.name,
      scope: p.scope ?? profile.scope,
      ...(p.expirationSeconds !== undefined ? { expirationSeconds: p.expirationSeconds } : {}),
      ...(p.notes !== undefined ? { notes: p.notes } : {}),
      updatedAt: ctx.now,
    })
    return { sessionProfileId: profile.id }
  },
})

/** The job that ends the sessions of a deleted session profile, a batch at a time (`endProfileSessionsHandler`). */
export const END_PROFILE_SESSIONS_JOB = 'limits.end_profile_sessions'

/** The job's id for a profile: the deletion's rerun writes the same one. */
const endProfileSessionsJobId = (sessionProfileId: string) =>
  `${END_PROFILE_SESSIONS_JOB}:${sessionProfileId}`

/**
 * Deleting a profile ends its sessions. Its transaction deletes the profile row and writes the job
 * that deletes their keys (`END_PROFILE_SESSIONS_JOB`): a few writes, whatever the profile's
 * sessions, so a stream of logins under the profile (each reads it and adds a key under it) does
 * not hold it off: a login either commits first or finds the profile gone (404
 * `SESSION_PROFILE_NOT_FOUND`). From its commit, on every instance, each session of the profile is
 * refused everything, reads included (`authenticateApiKey`: its profile is gone, 401
 * `PUBLIC_KEY_NOT_FOUND`), its activities too (`confineToProfile`), a key an older instance wrote
 * without the profile's index column among them. The job then deletes their keys, in every
 * sub-organization for an app's profile, each live one with its `LATCHKEY_SESSION_REVOKED`
 * (`deleted`, naming this activity).
 */
export const deleteSessionProfile = defineActivity('latchkey_delete_session_profile', {
  parse: (r) => ({ sessionProfileId: r.string('sessionProfileId', { max: 200 }) }),
  run: async (ctx, p) => {
    const profile = await findSessionProfile(ctx.tx, ctx.organization.id, p.sessionProfileId)
    await ctx.tx.delete('sessionProfiles', profile.id)
    const payload: DeletedProfile = {
      sessionProfileId: profile.id,
      activityId: ctx.activityId,
      organizationId: ctx.organization.id,
      ...(ctx.organization.parentOrganizationId !== undefined
        ? { parentOrganizationId: ctx.organization.parentOrganizationId }
        : {}),
    }
    await ctx.runtime.jobs.enqueue(ctx.tx, END_PROFILE_SESSIONS_JOB, payload, {
      id: endProfileSessionsJobId(profile.id),
    })
    return { sessionProfileId: profile.id }
  },
})

/** Longest a run of the job deletes batches before it hands on to its next run (put again). */
const RUN_BUDGET_MS = 5000

/**
 * The `limits.end_profile_sessions` job: deletes the keys of a deleted profile's sessions
 * (`endSessionsOfDeletedProfile`), `DELETED_PROFILE_BATCH` keys a transaction, until a batch finds
 * fewer. A run that has deleted for `RUN_BUDGET_MS` puts its job again, due now, in its last
 * batch's transaction, and ends, so one profile's thousands of sessions neither hold a run slot
 * past its timeout nor keep the other jobs waiting; a run that dies between batches is run again
 * (its lease runs out) and goes on from what is left (every batch reads what is still there).
 */
export function endProfileSessionsHandler(runtime: Runtime): JobHandler<DeletedProfile> {
  return {
    maxAttempts: Number.MAX_SAFE_INTEGER,
    timeoutMs: RUN_BUDGET_MS + 60_000,
    async run(payload, context) {
      const started = Date.now()
      for (;;) {
        const { ended, more, handOn } = await runtime.store.transaction(async (tx) => {
          const batch = await endSessionsOfDeletedProfile(runtime, tx, payload)
          const handOn = batch.more && (Date.now() - started > RUN_BUDGET_MS || context.signal.aborted)
          if (handOn)
            await runtime.jobs.enqueue(tx, END_PROFILE_SESSIONS_JOB, payload, {
              id: endProfileSessionsJobId(payload.sessionProfileId),
            })
          return { ...batch, handOn }
        })
        // Counted once committed (a rerun of the batch's transaction counts once).
        if (ended > 0) runtime.emit('signin.sessions_revoked', { reason: 'deleted', count: ended })
        if (!more || handOn) return
      }
    },
  }
}

export const renderSessionProfile = (profile: SessionProfileRow): SessionProfile => ({
  sessionProfileId: profile.id,
  sessionProfileName: profile.name,
  scope: profile.scope,
  ...(profile.expirationSeconds !== undefined ? { expirationSeconds: profile.expirationSeconds } : {}),
  ...(profile.notes !== undefined ? { notes: profile.notes } : {}),
  createdAt: timestampOf(profile.createdAt),
  updatedAt: timestampOf(profile.updatedAt),
})

export const getSessionProfile = defineQuery('get_session_profile', {
  parse: (r) => ({ sessionProfileId: r.string('sessionProfileId', { max: 200 }) }),
  run: async ({ store, organization }, { sessionProfileId }) => ({
    sessionProfile: renderSessionProfile(
      await findSessionProfile(store, organization.id, sessionProfileId, 'sessionProfileId'),
    ),
  }),
})

export const getSessionProfiles = defineQuery('get_session_profiles', {
  parse: () => ({}),
  run: async ({ store, organization }) => ({
    sessionProfiles: (await store.findBy('sessionProfiles', 'organizationId', organization.id))
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
      .map(renderSessionProfile),
  }),
})

const refusal = (input: GateInput, profileId: string, why: string): ApiError =>
  new PermissionError({
    code: 'SESSION_SCOPE_DENIED',
    message: `${input.row.path} is outside this session's scope (session profile ${profileId}): ${why}`,
    extra: { outcome: 'OUTCOME_DENY_EXPLICIT', activityId: input.row.id, sessionProfileId: profileId },
  })

/**
 * True only when `scope` evaluates to true (an error, a non-bool or a missing keyword: false).
 * Its steps are taken from `budget`, the decision's: running past it is false too (`spent`).
 */
function holds(scope: string, context: PolicyScope, budget: DecisionBudget): boolean {
  try {
    return evaluateExpression(parseCondition(scope), context, POLICY_LIMITS.maxSteps, budget) === true
  } catch {
    return false
  }
}

/** The decision's budget ran out: what was evaluated past it is refused, not judged. */
const spent = (budget: DecisionBudget) => budget.remaining < 0

/** What an expression may come to once facts still pending are known. */
type Outcome = 'true' | 'false' | 'error'
const ANY: ReadonlySet<Outcome> = new Set(['true', 'false', 'error'])

/**
 * Whether `scope` may hold for `context` once the facts `pending` names are known (a send before
 * its `prepare`: its fee). Evaluated with them pending (`withPending`): one that reads none of
 * them is decided as `holds` decides it. One that reads one may still be false whatever they are
 * (`eth.tx.gas <= 50000 && eth.tx.to == '0xSHOP'` for a send to another address): then it is
 * judged again operand by operand (`outcomes`), so that where the author put the fee's clauses
 * changes nothing. Both passes take their steps from `budget` (the decision's, shared by every
 * call of the send): running past it is false, never "maybe", so a scope too costly for one
 * decision is refused here, before the node is asked for a fee it would be judged with again.
 * (Exported for test/policies/profileScopePending.test.ts.)
 */
export function mayHold(
  scope: string,
  context: PolicyScope,
  pending: PolicyFactFields,
  budget: DecisionBudget = decisionBudget(),
): boolean {
  let tree: Expr
  try {
    tree = parseCondition(scope)
  } catch {
    return false
  }
  const probe = { read: false }
  try {
    const value = evaluateExpression(
      tree,
      withPending(context, pending, probe),
      POLICY_LIMITS.maxSteps,
      budget,
    )
    if (value === true) return true
  } catch {}
  if (!probe.read || spent(budget)) return false
  // The operands together get one evaluation's steps (past them: anything may come of it), out of
  // what the decision has left (past that: refused, as `holds` would refuse it).
  const operands = { remaining: Math.min(POLICY_LIMITS.maxSteps, budget.remaining) }
  const granted = operands.remaining
  const may = outcomes(tree, context, pending, operands)
  budget.remaining -= granted - operands.remaining
  return may.has('true') && !spent(budget)
}

/**
 * What `node` may evaluate to over `context` whatever the pending facts turn out to be, as
 * `evaluateExpression` evaluates it (`&&` and `||` left to right, short-circuit, an operand that
 * fails or is not a bool outweighed by one that stops them; `!`): at least every outcome it can
 * have. An operand that reads a pending fact (or that runs out of steps here) may be anything; its
 * operator then combines what each operand may be, so `x && false` is false whatever `x` is, and
 * `x && true` may be anything.
 */
function outcomes(
  node: Expr,
  context: PolicyScope,
  pending: PolicyFactFields,
  budget: { remaining: number },
): ReadonlySet<Outcome> {
  if (node.type === 'not') {
    const operand = outcomes(node.operand, context, pending, budget)
    return new Set(
      [...operand].map((outcome) => (outcome === 'true' ? 'false' : outcome === 'false' ? 'true' : 'error')),
    )
  }
  if (node.type === 'logical') {
    // `&&` stops at the first false (`||` true), and goes on past true (`||` false) and past an
    // error, which it gives only if nothing stops it (CEL). `failed`: whether an operand before
    // may have failed, `clean`: whether all before may have gone on without.
    const stops: Outcome = node.op === '&&' ? 'false' : 'true'
    const goesOn: Outcome = node.op === '&&' ? 'true' : 'false'
    const ends = new Set<Outcome>()
    let clean = true
    let failed = false
    for (const operand of node.operands) {
      const may = outcomes(operand, context, pending, budget)
      if (may.has(stops)) ends.add(stops)
      failed = (failed && (may.has(goesOn) || may.has('error'))) || (clean && may.has('error'))
      clean = clean && may.has(goesOn)
      if (!clean && !failed) return ends
    }
    if (clean) ends.add(goesOn)
    if (failed) ends.add('error')
    return ends
  }
  const probe = { read: false }
  try {
    const value = evaluateExpression(
      node,
      withPending(context, pending, probe),
      POLICY_LIMITS.maxSteps,
      budget,
    )
    return new Set([value === true ? 'true' : value === false ? 'false' : 'error'])
  } catch {
    return probe.read || budget.remaining < 0 ? ANY : new Set(['error'])
  }
}

/**
 * The confinement of a session issued under a profile (`ServicePlugin.confine`): its activity
 * runs only if it is none of what such a session never does and the profile's current scope
 * holds for it (for every call of a batch, as policies judge it). Its evaluations for one decision
 * share one budget of steps, as the policies' do (`decisionBudget`, 400,000 steps; each evaluation
 * also at most `POLICY_LIMITS.maxSteps`): a costly scope that is true would otherwise cost a batch
 * of 100 payloads 100 evaluations, and each call of a send up to three. Past it, it is refused.
 * A send judged before its fee is known (`GateInput.pendingFacts`: its dry run, or it waits for
 * consensus unprepared) is refused only when the scope is false whatever the fee (or runs out of
 * the budget); it is judged with the fee it is signed at before it is signed (its submission, or
 * its run after a vote or a second factor: `runAsSubmitter`). A
 * deleted profile refuses all but one thing: the session signing itself out (`isOwnLogout`), which
 * any profile lets through.
 */
export async function confineToProfile(input: GateInput): Promise<ApiError | undefined> {
  const profileId = input.caller.credential.sessionProfileId
  if (profileId === undefined) return undefined
  // Before the profile is read: a session of a deleted or narrowed profile can still end itself.
  if (isOwnLogout(input)) return undefined
  const { tx, row } = input
  const profile = await tx.get('sessionProfiles', profileId)
  if (!profile) return refusal(input, profileId, 'the profile was deleted')
  const { resource, action } = ACTIVITIES[row.path as ActivityPath]
  if (NEVER_RESOURCES.has(resource) || NEVER_ACTIONS.has(action))
    return refusal(input, profileId, `a profile's session never acts on ${resource} (${action})`)
  const contexts = await policyContextsOf(tx, row, {
    decodeTransaction: decodeTransactionForPolicy,
    ...(input.facts ? { facts: input.facts } : {}),
  })
  // Before a send's `prepare` (or not prepared since), its fee is pending: a scope that may hold
  // with it does not refuse here; the send is judged again with its fee before it is signed.
  const { pendingFacts } = input
  const budget = decisionBudget()
  const allowed = pendingFacts
    ? (context: PolicyScope) => mayHold(profile.scope, context, pendingFacts, budget)
    : (context: PolicyScope) => holds(profile.scope, context, budget)
  if (contexts.every(allowed)) return undefined
  if (spent(budget))
    return refusal(
      input,
      profileId,
      `its scope took more than ${POLICY_LIMITS.maxStepsPerDecision} steps to evaluate for this activity ` +
        `(one budget for all its ${contexts.length} payloads, signers or calls)`,
    )
  return refusal(input, profileId, `its scope does not allow it`)
}
