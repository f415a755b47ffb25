import type { PolicyOutcome } from '@latchkey/protocol'
import { isSessionKey } from '../domain/sessions.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { type ApiError, ConflictError, PermissionError } from '../kernel/base/errors.ts'
import { decodeTransactionForPolicy } from '../kernel/crypto/signTransaction.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ActivityHandler, Caller, PolicyFactFields, PolicyFacts } from '../kernel/registry.ts'
import type { ActivityRow, OrganizationRow, VoteRow } from '../kernel/store/model.ts'
import { isExpired } from '../kernel/store/model.ts'
import type { Reads, Transaction } from '../kernel/store/Store.ts'
import type { PolicyScope, PolicyStruct } from '../policies/evaluateExpression.ts'
import {
  budgetSpent,
  combinePolicyResults,
  type DecisionBudget,
  type DenyOutOfSteps,
  decisionBudget,
  type EvaluatePoliciesInput,
  evaluatePolicies,
  evaluatePoliciesInScopes,
  type PolicyEvaluationResult,
  type PolicyInput,
} from '../policies/evaluatePolicies.ts'
import { POLICY_LIMITS } from '../policies/limits.ts'
import { type Approval, consensusContextOf, policyContextsOf } from '../policies/policyContextOf.ts'

/**
 * Who may make an activity happen, decided in one place: when it is submitted
 * (`decideActivity`) and on every vote while it awaits consensus (`decideAfterVote`).
 *
 * An activity happens when the organization's root quorum approved it, or when its policies
 * allow it (policies/evaluatePolicies.ts: a matching DENY wins, then a matching ALLOW whose
 * consensus is met). A root user below the quorum threshold waits for the other root users; a
 * matching ALLOW whose consensus is not met yet waits for approvers; anything else is refused.
 * Each decision is recorded as a policy evaluation, read back through `get_policy_evaluations`:
 * the first outcome (no policyId) is the decision, then one per policy of the organization.
 */

export type Decision =
  | { outcome: 'OUTCOME_ALLOW' }
  | { outcome: 'OUTCOME_REQUIRES_CONSENSUS' }
  | { outcome: 'OUTCOME_DENY_IMPLICIT' | 'OUTCOME_DENY_EXPLICIT'; error: ApiError }

export interface DecisionInput {
  tx: Transaction
  runtime: Runtime
  /** The activity just recorded (status CREATED). */
  row: ActivityRow
  /** The organization it acts in. */
  organization: OrganizationRow
  caller: Caller
  handler: ActivityHandler
  /** Its parameters, parsed by the handler. */
  parameters: unknown
  /**
   * A plugin vouches for this caller on this path (the sign-in wing for the auth proxy's user):
   * a non-root caller of an `allowNonRoot` handler is then allowed without policies.
   */
  vouched: boolean
  /** What its `prepare` fixed that policies read (`ActivityHandler.policyFacts`). */
  facts?: PolicyFacts
  /** A dry run before its `prepare`: the facts it will fix, not known yet (`PendingFacts`). */
  pending?: PendingFacts
}

/**
 * Facts an activity's `prepare` will fix (`ActivityHandler.policyFactFields`), in a dry run of its
 * decision before it: each field is there (as it will be), and reading its value fails the
 * policy's evaluation (OUTCOME_ERROR). `read`: an ALLOW policy failed on reading one, in some
 * scope; with the facts, it may allow. Otherwise a refusal stands whatever the facts: what a
 * DENY that matched read was not them, and a DENY reading them can refuse, never allow.
 */
export interface PendingFacts {
  fields: PolicyFactFields
  read: boolean
}

/**
 * `scope` with the pending facts' fields in each `eth.tx`: reading one sets `probe.read` and fails.
 * Policies are judged in it in a dry run (`PendingFacts`), and so is a session profile's scope
 * (`GateInput.pendingFacts`), each with its own probe.
 */
export function withPending(
  scope: PolicyScope,
  fields: PolicyFactFields,
  probe: { read: boolean },
): PolicyScope {
  const eth = scope.eth as PolicyStruct | undefined
  const tx = eth?.tx
  if (typeof tx !== 'object' || Array.isArray(tx)) return scope
  const stand: PolicyStruct = {}
  for (const name of fields.ethTx) {
    if (Object.hasOwn(tx, name)) continue
    Object.defineProperty(stand, name, {
      enumerable: true,
      get() {
        probe.read = true
        throw new Error(`eth.tx.${name} is not known before the activity is prepared`)
      },
    })
  }
  Object.assign(stand, tx)
  return { ...scope, eth: { ...eth, tx: stand } }
}

type Evaluation = { policyId: string; outcome: PolicyOutcome }

/**
 * Records one decision on `activity` as a policy evaluation: its outcome first (no policyId), then
 * each policy's, and the vote that led to it if one did.
 */
export async function recordEvaluation(
  tx: Transaction,
  runtime: Runtime,
  activity: ActivityRow,
  {
    outcome,
    voteId = '',
    evaluations = [],
  }: { outcome: PolicyOutcome; voteId?: string; evaluations?: readonly Evaluation[] },
): Promise<void> {
  const now = runtime.now()
  await tx.put('policyEvaluations', {
    id: runtime.newId(),
    activityId: activity.id,
    organizationId: activity.organizationId,
    voteId,
    outcomes: [{ outcome }, ...evaluations],
    createdAt: now,
    updatedAt: now,
  })
}

/**
 * Records `caller`'s vote on `activity` and returns its id. Votes are open to every user of the
 * organization; `decideAfterVote` judges what they add up to. `replaces`: the caller's approval
 * that no longer counts (`mayVote`), whose row the new vote takes (its id, and so the policy
 * evaluation that names it, kept; the rest is the new vote): the record holds each user's latest
 * vote, so an activity's votes are bounded by the organization's users, however often one of
 * them votes again after their session ended.
 */
export async function recordVote({
  tx,
  runtime,
  activity,
  caller,
  selection,
  replaces,
}: Omit<VoteInput, 'organization'> & { replaces?: VoteRow | undefined }): Promise<string> {
  const now = runtime.now()
  const id = replaces?.id ?? runtime.newId()
  await tx.put('votes', {
    id,
    organizationId: activity.organizationId,
    activityId: activity.id,
    userId: caller.userId,
    selection,
    message: activity.fingerprint,
    publicKey: caller.credential.publicKey || (await publicKeyOf(tx, caller)),
    signature: caller.credential.signature,
    scheme: caller.credential.scheme,
    createdAt: now,
    updatedAt: now,
  })
  return id
}

/**
 * The public key of `caller`'s stored credential: a vote made by an activity that waited (a vote a
 * gate held, run once proven) is cast by its submitter as they are now (`submitterNow`), whose
 * credential carries its id and no stamp; the vote keeps the key, as `approvalOf` reads it.
 */
async function publicKeyOf(reads: Reads, caller: Caller): Promise<string> {
  const key = await reads.get('apiKeys', caller.credential.id)
  if (key?.userId === caller.userId) return key.publicKey
  const passkey = key ? undefined : await reads.get('authenticators', caller.credential.id)
  return passkey?.userId === caller.userId ? passkey.publicKeyHex : ''
}

/**
 * The approval `vote` still gives at `now`: its user with the credential that cast it (votes keep
 * the stamp's public key), while that credential is there, is the voter's and has not expired.
 * Undefined once it is gone (a logged-out or expired session, a deleted key or passkey): a vote
 * counts no longer than the credential that cast it could sign, as a waiting activity runs no
 * longer than its submitter's credential could (`submitterNow`). Read in the deciding
 * transaction, so a removal racing a vote on another instance conflicts with it. The vote stays
 * in the record. A token-attested stamp (only a `stamp_login` submission's approval) names no
 * stored credential and counts as its submitter does.
 */
async function approvalOf(reads: Reads, vote: VoteRow, now: number): Promise<Approval | undefined> {
  if (vote.scheme.startsWith('STAMP_ATTESTED_')) return { userId: vote.userId, credentialId: '' }
  // By user (a handful of keys), not by public key (a back end's key is in many organizations).
  const key = (await reads.findBy('apiKeys', 'userId', vote.userId)).find(
    (row) => row.publicKey === vote.publicKey && !isExpired(row, now),
  )
  if (key) return { userId: vote.userId, credentialId: key.id }
  const passkey = (await reads.findBy('authenticators', 'userId', vote.userId)).find(
    (row) => row.publicKeyHex === vote.publicKey || row.credentialId === vote.publicKey,
  )
  return passkey ? { userId: vote.userId, credentialId: passkey.id } : undefined
}

/**
 * Each user's latest approval among `votes` (the last cast; on a tie, the last listed). Only it is
 * judged: a user votes again only once their approval no longer counts (`mayVote`), so each
 * earlier one had stopped counting when the later one was cast. Rows recorded before a new vote
 * took its user's dead approval's row (`recordVote`) may hold several per user.
 */
function latestApprovals(votes: readonly VoteRow[]): Map<string, VoteRow> {
  const latest = new Map<string, VoteRow>()
  for (const vote of votes) {
    if (vote.selection !== 'VOTE_SELECTION_APPROVED') continue
    const seen = latest.get(vote.userId)
    if (!seen || vote.createdAt >= seen.createdAt) latest.set(vote.userId, vote)
  }
  return latest
}

/**
 * The approval `vote` (a user's latest) gives at `now` (`approvalOf`). The submitter's approval
 * (their submission) counts as it is: the activity runs as them only while their credential is
 * there (`submitterNow` fails it otherwise), so an activity whose submitter ended fails once
 * approved rather than waiting for ever.
 */
async function standingApproval(
  reads: Reads,
  activity: ActivityRow,
  vote: VoteRow,
  now: number,
): Promise<Approval | undefined> {
  const approval = await approvalOf(reads, vote, now)
  if (approval) return approval
  return vote.userId === activity.userId ? { userId: vote.userId, credentialId: '' } : undefined
}

/**
 * What the votes on `activity` add up to at `now`: the users who rejected it (a rejection counts
 * whatever becomes of its credential: it can only stop an activity), and one approval per other
 * user whose latest approval still counts (`standingApproval`). Its reads are bounded by the
 * voters, not by their votes.
 */
async function standingVotes(
  reads: Reads,
  activity: ActivityRow,
  votes: readonly VoteRow[],
  now: number,
): Promise<{ rejectedBy: Set<string>; approvals: Approval[] }> {
  const rejectedBy = new Set(
    votes.filter((vote) => vote.selection === 'VOTE_SELECTION_REJECTED').map((vote) => vote.userId),
  )
  const approvals: Approval[] = []
  for (const [userId, vote] of latestApprovals(votes)) {
    if (rejectedBy.has(userId)) continue
    const approval = await standingApproval(reads, activity, vote, now)
    if (approval) approvals.push(approval)
  }
  return { rejectedBy, approvals }
}

/**
 * Whether `userId` may vote on `activity` at `now`, as `decideAfterVote` judges it: they have not
 * rejected it and have no approval that still counts (none, or their latest one's credential has
 * ended). Reads that user's credentials only: `renderActivity` answers `canApprove` with it.
 */
export async function mayVote(
  reads: Reads,
  {
    activity,
    votes,
    userId,
    now,
  }: { activity: ActivityRow; votes: readonly VoteRow[]; userId: string; now: number },
): Promise<boolean> {
  const own = votes.filter((vote) => vote.userId === userId)
  if (own.some((vote) => vote.selection === 'VOTE_SELECTION_REJECTED')) return false
  const latest = latestApprovals(own).get(userId)
  return !latest || !(await standingApproval(reads, activity, latest, now))
}

/**
 * The organization's policies' judgement of an activity (`evaluate`). `spent`: its policies took
 * more than one decision's steps (`POLICY_LIMITS.maxStepsPerDecision`) in its scopes together.
 * `deniesOutOfSteps`: a DENY ran out of its own steps (`POLICY_LIMITS.maxSteps`) in some scope.
 * Either way the outcome is OUTCOME_DENY_IMPLICIT unless a DENY matched or the root quorum is met.
 */
type Judgement = PolicyEvaluationResult & { spent: boolean }

/** Why a refusal for want of steps was made (`refusal`): what `Judgement` carries of it. */
type StepsRefused = Pick<Judgement, 'spent' | 'deniesOutOfSteps'>

/** Whether the policies ran out of steps for it: the decision's budget, or a DENY its own. */
const outOfSteps = ({ spent, deniesOutOfSteps }: StepsRefused) => spent || (deniesOutOfSteps?.length ?? 0) > 0

/**
 * Evaluates the organization's policies for `activity` with these approvals, in each of its scopes
 * with one budget of steps (`evaluatePoliciesInScopes`: a policy is evaluated once for all the
 * scopes that hold the same values of the keywords it reads). Past the budget it fails closed:
 * the policies left error in the scopes left, so a DENY there was never evaluated and what allows
 * elsewhere (an ALLOW with no condition costs no step) cannot decide. It is refused
 * (OUTCOME_DENY_IMPLICIT) unless a DENY matched (OUTCOME_DENY_EXPLICIT) or the root quorum is met
 * (root users are not governed by policies). So is an activity one of whose DENYs ran out of its
 * own steps (`deniesOutOfSteps`: a list the caller sized can run it past them before the value it
 * denies), however much of the budget is left.
 */
async function evaluate(
  reads: Reads,
  activity: ActivityRow,
  approvals: readonly Approval[],
  {
    rootQuorumMet,
    facts,
    pending,
  }: { rootQuorumMet: boolean; facts?: PolicyFacts | undefined; pending?: PendingFacts | undefined },
): Promise<Judgement> {
  const policies = await reads.findBy('policies', 'organizationId', activity.organizationId)
  if (policies.length === 0)
    return {
      outcome: rootQuorumMet ? 'OUTCOME_ALLOW' : 'OUTCOME_DENY_IMPLICIT',
      evaluations: [],
      spent: false,
    }
  const consensus = await consensusContextOf(reads, activity.organizationId, approvals)
  const scopes = await policyContextsOf(reads, activity, {
    decodeTransaction: decodeTransactionForPolicy,
    ...(facts ? { facts } : {}),
  })
  const contexts = pending
    ? scopes.map((scope) => withPending(scope, pending.fields, { read: false }))
    : scopes
  const inputs = policies.map((policy) => ({
    id: policy.id,
    effect: policy.effect,
    condition: policy.condition,
    consensus: policy.consensus,
  }))
  // One budget for every scope: past it, the policies left get OUTCOME_ERROR in every scope after.
  const budget = decisionBudget()
  const results = evaluatePoliciesInScopes({ policies: inputs, contexts, consensus, rootQuorumMet, budget })
  const spent = budgetSpent(budget)
  const combined = combinePolicyResults(results)
  // A DENY out of steps refuses the scope it ran out in already (`evaluatePolicies`); checked
  // again here as one decision, as `spent` is.
  const stepsRanOut = outOfSteps({ spent, deniesOutOfSteps: combined.deniesOutOfSteps })
  // Out of steps, a dry run is refused unprepared: no ALLOW is evaluated again to learn whether
  // the pending facts would let it allow (each would fail before reading them anyway; a DENY that
  // ran out of steps read no pending fact before it did, so it runs out again with them).
  if (pending && !stepsRanOut)
    pending.read ||= allowFailedOnFacts(
      { policies: inputs, scopes, results, consensus, budget },
      pending.fields,
    )
  if (!stepsRanOut || rootQuorumMet || combined.outcome === 'OUTCOME_DENY_EXPLICIT')
    return { ...combined, spent }
  return { ...combined, outcome: 'OUTCOME_DENY_IMPLICIT', spent }
}

/**
 * Whether an ALLOW policy that failed to evaluate in a scope (a dry run's, facts pending) failed on
 * reading one of the pending facts: it is evaluated again there alone, reading them watched, with
 * what is left of the decision's `budget` (once it is spent, a policy fails before it reads them:
 * the send is not prepared).
 */
function allowFailedOnFacts(
  {
    policies,
    scopes,
    results,
    consensus,
    budget,
  }: {
    policies: readonly PolicyInput[]
    scopes: readonly PolicyScope[]
    results: readonly PolicyEvaluationResult[]
    consensus: EvaluatePoliciesInput['consensus']
    budget: DecisionBudget
  },
  fields: PolicyFactFields,
): boolean {
  return results.some((result, index) =>
    result.evaluations.some((evaluation, at) => {
      const policy = policies[at]!
      if (evaluation.outcome !== 'OUTCOME_ERROR' || policy.effect !== 'EFFECT_ALLOW') return false
      const probe = { read: false }
      evaluatePolicies({
        policies: [policy],
        context: withPending(scopes[index]!, fields, probe),
        consensus,
        rootQuorumMet: false,
        budget,
      })
      return probe.read
    }),
  )
}

/**
 * Whether the activity is the session signing itself out: `delete_api_keys` of its own key (the
 * credential that stamped it), for its own user in its own organization, and of nothing else.
 * That narrows nothing (every other caller may do it too, `selfService`): a session profile's
 * scope lets it through whatever it says (limits/sessionProfiles.ts), and so does the root quorum
 * for a session key (`endsOwnSession`). Another key of the same user (the owner's, another
 * session's), another user's, or a list adding one is not it.
 */
export function isOwnLogout({ row, caller }: { row: ActivityRow; caller: Caller }): boolean {
  if (row.path !== 'delete_api_keys') return false
  const { userId, apiKeyIds } = row.intent as { userId?: unknown; apiKeyIds?: unknown }
  return (
    caller.credential.kind === 'API_KEY' &&
    row.organizationId === caller.organizationId &&
    userId === caller.userId &&
    Array.isArray(apiKeyIds) &&
    apiKeyIds.length > 0 &&
    apiKeyIds.every((id) => id === caller.credential.id)
  )
}

/**
 * Whether the activity is a session key's own logout (`isOwnLogout`, the stamping key read in the
 * deciding transaction: a session, `isSessionKey`, of the caller). It runs without consensus
 * whatever the root quorum, as a non-root user's does: under a quorum above 1 a root user's
 * logout would otherwise wait for the co-roots' votes, the session (and a thief's copy of it)
 * live meanwhile. Deleting a durable key, even the stamping one, still needs the quorum.
 */
async function endsOwnSession(reads: Reads, row: ActivityRow, caller: Caller): Promise<boolean> {
  if (!isOwnLogout({ row, caller })) return false
  const key = await reads.get('apiKeys', caller.credential.id)
  return key?.userId === caller.userId && key.organizationId === row.organizationId && isSessionKey(key)
}

/**
 * The refusal names the outcome and the activity, whose evaluations `get_policy_evaluations`
 * returns; one refused because its policies ran out of steps (`spent`), or a DENY ran out of its
 * own (`deniesOutOfSteps`), says so.
 */
async function refusal(
  outcome: 'OUTCOME_DENY_IMPLICIT' | 'OUTCOME_DENY_EXPLICIT',
  reads: Reads,
  activity: ActivityRow,
  { evaluations, spent, deniesOutOfSteps }: { evaluations: readonly Evaluation[] } & StepsRefused,
): Promise<ApiError> {
  if (outcome === 'OUTCOME_DENY_EXPLICIT') {
    const denying = await mapInOrder(
      evaluations.filter((evaluation) => evaluation.outcome === 'OUTCOME_DENY_EXPLICIT'),
      async (evaluation) => (await reads.get('policies', evaluation.policyId))?.name ?? evaluation.policyId,
    )
    return new PermissionError({
      message: `${activity.path} is denied by policy ${denying.map((name) => `'${name}'`).join(', ')}`,
      extra: { outcome, activityId: activity.id },
    })
  }
  if (spent)
    return new PermissionError({
      message:
        `${activity.path} is refused: the policies of organization ${activity.organizationId} took more than ` +
        `${POLICY_LIMITS.maxStepsPerDecision} steps to evaluate for it (one budget for all its accounts, ` +
        'payloads, signers and calls), so some were never evaluated; split it into smaller activities',
      extra: {
        outcome,
        activityId: activity.id,
        limit: 'maxStepsPerDecision',
        max: POLICY_LIMITS.maxStepsPerDecision,
      },
    })
  const deny = ownStepsRanOut(deniesOutOfSteps)
  if (deny) {
    const name = (await reads.get('policies', deny.policyId))?.name ?? deny.policyId
    return new PermissionError({
      message:
        `${activity.path} is refused: DENY policy '${name}' took more than ${POLICY_LIMITS.maxSteps} steps ` +
        'to evaluate for it, so whether it denies it is unknown; shorten the lists it reads',
      extra: {
        outcome,
        activityId: activity.id,
        limit: 'maxSteps',
        max: POLICY_LIMITS.maxSteps,
        policyId: deny.policyId,
        policyName: name,
      },
    })
  }
  return new PermissionError({
    message: `no policy of organization ${activity.organizationId} allows ${activity.path} for user ${activity.userId}`,
    extra: { outcome, activityId: activity.id },
  })
}

/** The first DENY that ran out of its own steps (`POLICY_LIMITS.maxSteps`), if one did. */
const ownStepsRanOut = (denies: readonly DenyOutOfSteps[] | undefined): DenyOutOfSteps | undefined =>
  denies?.find((deny) => deny.limit === 'maxSteps')

/**
 * A new activity. Callers the policies do not govern are allowed as before: parent-organization
 * users of handlers that admit them, the auth proxy's user on the sign-in activities (vouched for
 * by the sign-in wing), any user on a self-service activity (the handler checks it is their own),
 * a root user's session signing itself out (`endsOwnSession`), and votes. For everyone else the root quorum or the policies decide; the
 * submission is its submitter's approval.
 */
export async function decideActivity({
  tx,
  runtime,
  row,
  organization,
  caller,
  handler,
  vouched,
  facts,
  pending,
}: DecisionInput): Promise<Decision> {
  const sameOrganization = caller.organizationId === organization.id
  const isRoot = sameOrganization && organization.rootUserIds.includes(caller.userId)
  const admitted = handler.selfService || (handler.allowNonRoot && vouched)
  if (!sameOrganization || (!isRoot && admitted) || (await endsOwnSession(tx, row, caller))) {
    await recordEvaluation(tx, runtime, row, { outcome: 'OUTCOME_ALLOW' })
    return { outcome: 'OUTCOME_ALLOW' }
  }
  const rootQuorumMet = isRoot && (organization.rootQuorumThreshold <= 1 || Boolean(handler.skipConsensus))
  const approvals = [{ userId: caller.userId, credentialId: caller.credential.id }]
  const {
    outcome: policyOutcome,
    evaluations,
    spent,
    deniesOutOfSteps,
  } = await evaluate(tx, row, approvals, {
    rootQuorumMet,
    facts,
    pending,
  })
  if (rootQuorumMet || policyOutcome === 'OUTCOME_ALLOW') {
    await recordEvaluation(tx, runtime, row, { outcome: 'OUTCOME_ALLOW', evaluations })
    return { outcome: 'OUTCOME_ALLOW' }
  }
  // A root user below the threshold waits for the root quorum whatever the policies say (the
  // quorum overrides them); a matching ALLOW with unmet consensus waits for its approvers.
  if (isRoot || policyOutcome === 'OUTCOME_REQUIRES_CONSENSUS') {
    const voteId = await recordVote({
      tx,
      runtime,
      activity: row,
      caller,
      selection: 'VOTE_SELECTION_APPROVED',
    })
    await recordEvaluation(tx, runtime, row, { outcome: 'OUTCOME_REQUIRES_CONSENSUS', voteId, evaluations })
    return { outcome: 'OUTCOME_REQUIRES_CONSENSUS' }
  }
  const outcome =
    policyOutcome === 'OUTCOME_DENY_EXPLICIT' ? 'OUTCOME_DENY_EXPLICIT' : 'OUTCOME_DENY_IMPLICIT'
  await recordEvaluation(tx, runtime, row, { outcome, evaluations })
  return { outcome, error: await refusal(outcome, tx, row, { evaluations, spent, deniesOutOfSteps }) }
}

export interface VoteInput {
  tx: Transaction
  runtime: Runtime
  /** The activity awaiting consensus. */
  activity: ActivityRow
  organization: OrganizationRow
  caller: Caller
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED'
}

/**
 * Records a vote by any user of the organization and decides again with every approval so far:
 * root approvals reaching the threshold, or policies allowing with these approvers, allow it.
 * It is rejected once neither can happen any more, even if every user who has not rejected it
 * approved; otherwise it keeps waiting.
 */
export async function decideAfterVote({
  tx,
  runtime,
  activity,
  organization,
  caller,
  selection,
}: VoteInput): Promise<'OUTCOME_ALLOW' | 'OUTCOME_REJECTED' | 'OUTCOME_REQUIRES_CONSENSUS'> {
  // A user votes once, unless the approval they cast no longer counts (its credential ended):
  // they may then vote again, with a credential they still hold (`mayVote`, judged the same way).
  const earlier = await tx.findBy('votes', 'activityId', activity.id)
  const { rejectedBy, approvals } = await standingVotes(tx, activity, earlier, runtime.now())
  if (rejectedBy.has(caller.userId) || approvals.some((approval) => approval.userId === caller.userId))
    throw new ConflictError({
      code: 'ALREADY_VOTED',
      field: 'parameters.fingerprint',
      message: `you already voted on activity ${activity.id}`,
    })
  // Their approval that no longer counts, if any: the new vote takes its row (`recordVote`).
  const replaces = latestApprovals(earlier).get(caller.userId)
  const voteId = await recordVote({ tx, runtime, activity, caller, selection, replaces })
  if (selection === 'VOTE_SELECTION_REJECTED') rejectedBy.add(caller.userId)
  else approvals.push({ userId: caller.userId, credentialId: caller.credential.id })
  const roots = organization.rootUserIds
  const threshold = organization.rootQuorumThreshold
  const rootApprovals = approvals.filter((approval) => roots.includes(approval.userId)).length
  const now = await evaluate(tx, activity, approvals, { rootQuorumMet: rootApprovals >= threshold })
  let outcome: 'OUTCOME_ALLOW' | 'OUTCOME_REJECTED' | 'OUTCOME_REQUIRES_CONSENSUS'
  if (now.outcome === 'OUTCOME_ALLOW') outcome = 'OUTCOME_ALLOW'
  else if (roots.filter((id) => !rejectedBy.has(id)).length >= threshold)
    // The root quorum can still be met: it waits, whatever the policies could do.
    outcome = 'OUTCOME_REQUIRES_CONSENSUS'
  else {
    // The best case for the policies: every user who has not rejected it approves (with any of
    // their credentials). Built only here: it reads every user of the organization and their
    // credentials, which a vote that leaves the quorum reachable does not need.
    const hopeful = (
      await mapInOrder(
        (
          await tx.findBy('users', 'organizationId', organization.id)
        ).filter((user) => !rejectedBy.has(user.id)),
        async (user) => {
          const keys = await tx.findBy('apiKeys', 'userId', user.id)
          const passkeys = await tx.findBy('authenticators', 'userId', user.id)
          const ids = [...keys, ...passkeys].map((credential) => credential.id)
          return (ids.length > 0 ? ids : ['']).map((credentialId) => ({ userId: user.id, credentialId }))
        },
      )
    ).flat()
    const policiesPossible =
      (await evaluate(tx, activity, hopeful, { rootQuorumMet: false })).outcome === 'OUTCOME_ALLOW'
    outcome = policiesPossible ? 'OUTCOME_REQUIRES_CONSENSUS' : 'OUTCOME_REJECTED'
  }
  await recordEvaluation(tx, runtime, activity, { outcome, voteId, evaluations: now.evaluations })
  return outcome
}

export interface StoredDecisionInput {
  tx: Transaction
  runtime: Runtime
  /** The activity that waited (for consensus, for authenticators) and is about to run. */
  activity: ActivityRow
  /** The organization it acts in, as this transaction reads it. */
  organization: OrganizationRow
  /** Its submitter, with the credential that submitted it, as they are now. */
  caller: Caller
  handler: ActivityHandler
  vouched: boolean
  /**
   * What its `prepare` fixed for this run that policies read (`ActivityHandler.policyFacts`): the
   * facts it is about to run with, not those it was first judged with.
   */
  facts?: PolicyFacts
}

/**
 * An activity that waited, decided again just before it runs as its submitter: as a new
 * submission of it would be now (the submitter's current root membership, the organization's
 * current root quorum and policies), counting the approvals it gathered while it awaited
 * consensus. A held activity can wait for days; the submitter may have lost what allowed it
 * meanwhile (removed from the root quorum, a policy deleted or a DENY added). A refusal is
 * recorded as a policy evaluation and answered with the error a new submission would get; an
 * activity that would now need consensus is refused too (it is submitted again, not re-queued).
 * An allowed one records nothing: its allowing decision is already recorded.
 */
export async function decideStored({
  tx,
  runtime,
  activity,
  organization,
  caller,
  handler,
  vouched,
  facts,
}: StoredDecisionInput): Promise<Exclude<Decision, { outcome: 'OUTCOME_REQUIRES_CONSENSUS' }>> {
  const sameOrganization = caller.organizationId === organization.id
  const isRoot = sameOrganization && organization.rootUserIds.includes(caller.userId)
  const admitted = handler.selfService || (handler.allowNonRoot && vouched)
  if (!sameOrganization || (!isRoot && admitted) || (await endsOwnSession(tx, activity, caller)))
    return { outcome: 'OUTCOME_ALLOW' }
  // The approvals that still count (`standingVotes`: not one whose credential has ended).
  const voted = (
    await standingVotes(tx, activity, await tx.findBy('votes', 'activityId', activity.id), runtime.now())
  ).approvals.filter((approval) => approval.userId !== caller.userId)
  // The submission is its submitter's approval, with the credential that made it.
  const approvals = [{ userId: caller.userId, credentialId: caller.credential.id }, ...voted]
  const rootApprovers = new Set(
    approvals.map((approval) => approval.userId).filter((id) => organization.rootUserIds.includes(id)),
  )
  const rootQuorumMet =
    rootApprovers.size >= organization.rootQuorumThreshold || (isRoot && Boolean(handler.skipConsensus))
  const {
    outcome: policyOutcome,
    evaluations,
    spent,
    deniesOutOfSteps,
  } = await evaluate(tx, activity, approvals, {
    rootQuorumMet,
    facts,
  })
  if (rootQuorumMet || policyOutcome === 'OUTCOME_ALLOW') return { outcome: 'OUTCOME_ALLOW' }
  const outcome =
    policyOutcome === 'OUTCOME_DENY_EXPLICIT' ? 'OUTCOME_DENY_EXPLICIT' : 'OUTCOME_DENY_IMPLICIT'
  await recordEvaluation(tx, runtime, activity, { outcome, evaluations })
  const error =
    outcome === 'OUTCOME_DENY_IMPLICIT' &&
    !outOfSteps({ spent, deniesOutOfSteps }) &&
    (isRoot || policyOutcome === 'OUTCOME_REQUIRES_CONSENSUS')
      ? new PermissionError({
          message: `${activity.path} by user ${activity.userId} now needs the approval of other users (the root quorum or a policy's consensus changed while it waited); submit it again`,
          extra: { outcome, activityId: activity.id },
        })
      : await refusal(outcome, tx, activity, { evaluations, spent, deniesOutOfSteps })
  return { outcome, error }
}
