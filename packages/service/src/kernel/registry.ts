import type {
  ActivityParameters,
  ActivityPath,
  ActivityResult,
  OauthProviderParams,
  OauthProviderParamsV2,
  QueryPath,
  QueryResponse,
} from '@latchkey/protocol'
import type { Hono } from 'hono'
import type { ApiError } from './base/errors.ts'
import type { ServiceEventMap, ServiceEventName } from './base/events.ts'
import type { Caller } from './Caller.ts'
import type { Reader } from './Reader.ts'
import type { PluginStateKey, Runtime, StampVerifier } from './Runtime.ts'
import type { PipelineEnv } from './requestEnv.ts'
import type { ActivityRow, OrganizationRow, UserRow } from './store/model.ts'
import type { Lookup, Reads, Transaction } from './store/Store.ts'

export type { Caller }

/**
 * Facts of an activity that policies read beside its parameters, fixed before its decision by its
 * handler's `prepare` (`ActivityHandler.policyFacts`). `ethTx`: fields of every `eth.tx` scope of
 * the activity (decimal strings, `sign_transaction`'s field names): a send's `gas`,
 * `max_fee_per_gas`, `max_priority_fee_per_gas`.
 */
export interface PolicyFacts {
  ethTx?: Readonly<Record<string, string>>
}

/**
 * The names of the facts a handler's `policyFacts` gives (`ActivityHandler.policyFactFields`),
 * known before its `prepare` runs: a dry run of its decision judges it with them pending.
 */
export type PolicyFactFields = { readonly [K in keyof PolicyFacts]-?: readonly string[] }

/** What `prepare` sees: no transaction (it may open its own, short ones, or call out). */
export interface PrepareContext {
  runtime: Runtime
  now: number
  organization: OrganizationRow
  caller: Caller
  activityId: string
  /** The type constant the activity was submitted as: one of its path's accepted versions. */
  type: string
  registry: Registry
  /**
   * Committed reads: the request's own (`requestReads`: what it read ahead, on PostgreSQL in one
   * statement with its credential and organization), else the store.
   */
  reads: Reads
}

/** What an activity handler gets: a transaction and the facts of the request. */
export interface ActivityContext {
  /** The activity's transaction: writes are committed only if `run` resolves. */
  tx: Transaction
  runtime: Runtime
  /** Clock time of the request, epoch ms. */
  now: number
  /** The organization the activity acts in (`organizationId` of the body). */
  organization: OrganizationRow
  caller: Caller
  activityId: string
  /** The type constant the activity was submitted as (set by the pipeline for every run). */
  type?: string
  /** A fresh id (creation-ordered). */
  newId(): string
  /** The handlers and plugins of this service. */
  registry: Registry
  /** What the handler's `prepare` returned (undefined for handlers without one). */
  prepared?: unknown
  /**
   * Emits an event once the activity's transaction commits: never for a run whose writes are
   * rolled back (the handler throws) or rerun (a conflict), unlike `runtime.emit`, which is at once.
   */
  report<K extends ServiceEventName>(name: K, data: ServiceEventMap[K]): void
  /**
   * What the handler's `precompute` resolved to, when it ran for this request and did not fail
   * (never for an activity run later through consensus): `run` checks the result still fits what
   * the transaction reads.
   */
  precomputed?: unknown
}

/**
 * One activity: `parse` validates `parameters` (throwing ApiError naming the field) and
 * `run` executes it inside a transaction. Register it with a plugin or the built-in map.
 */
export interface ActivityHandler<P extends ActivityPath = ActivityPath> {
  /**
   * `type` is the type constant as sent, one of the path's accepted versions
   * (`ActivityFacts.types`): a handler whose versions differ in shape reads that version's.
   */
  parse(parameters: Reader, type: string): ActivityParameters<P>
  run(ctx: ActivityContext, parameters: ActivityParameters<P>): ActivityResult<P> | Promise<ActivityResult<P>>
  /**
   * Work that must not hold a database transaction: outbound calls (OAuth code exchange, JWKS,
   * JSON-RPC broadcast, each with a timeout) and steps that commit on their own (OTP budgets and
   * records). It runs once the decision allows the activity, before the activity's transaction,
   * and its result reaches `run` as `ctx.prepared`; a throw fails the activity like a throw in
   * `run`. A handler that runs later through consensus prepares inside that transaction, so a
   * handler whose `prepare` opens transactions must also be `skipConsensus`.
   */
  prepare?(ctx: PrepareContext, parameters: ActivityParameters<P>): Promise<unknown>
  /**
   * Whether `prepare` has work for this request, read from committed data (`ctx.reads`, the
   * request's reads ahead): false skips it, and the dry run of the decision that goes before it,
   * as if it had prepared nothing (`run` gets `ctx.prepared` undefined). Absent: it always has.
   */
  prepares?(ctx: PrepareContext, parameters: ActivityParameters<P>): Promise<boolean>
  /**
   * What policies read of what `prepare` fixed and the parameters do not say (a send's gas and
   * fees, `PolicyFacts`). A handler with it is prepared before its decision unless a dry run
   * without the facts refuses it for a reason they cannot change (`policyFactFields`), and the
   * decision, the gates (MFA) and the confinement (session profiles) judge it with these facts,
   * which are what `run` signs with: a run after a
   * vote or an approval prepares again and is judged again with the new facts before it runs.
   * Absent facts (its `prepare` failed) leave the fields out: a policy reading them gets
   * OUTCOME_ERROR, and an MFA policy holds it.
   */
  policyFacts?(runtime: Runtime, prepared: unknown): PolicyFacts | undefined
  /**
   * The fields `policyFacts` gives, with it. Before it is prepared, a handler with facts gets a dry
   * run of its decision (without a transaction kept) in which reading one of them fails that
   * policy's evaluation: a caller refused whatever they are (a session profile's refusal, a
   * matching DENY that read none of them, no policy reading them) is refused without `prepare`
   * (its outbound calls) running.
   */
  policyFactFields?: PolicyFactFields
  /**
   * CPU-heavy work started before the activity's transaction (signing, key derivation through
   * `service.crypto`, maybe in a worker thread), so the transaction, which on SQLite holds the one
   * connection, does not wait for it. It runs once the caller is authenticated and the parameters
   * parsed, before the decision: it may read committed data but must not write, call out or reveal
   * anything. It resolves once its CPU work is done, to the work's results (a failed job as
   * undefined, never a rejection); the pipeline starts it before `prepare` and awaits it after, so
   * the transaction never waits on a crypto job: on SQLite a transaction waiting in a commit group
   * holds the one connection, and every transaction queued behind it (issue 42). `run` gets it as
   * `ctx.precomputed` and uses it only if it matches what the transaction reads (else it does the
   * work itself); a result the activity does not use (denied, replayed, awaiting consensus) is
   * dropped unseen.
   */
  precompute?(ctx: PrepareContext, parameters: ActivityParameters<P>): Promise<unknown>
  /**
   * A non-root caller a plugin vouches for (`ServicePlugin.vouchesFor`: the auth proxy's user)
   * may submit it without a policy; other non-root callers need one.
   * @default false
   */
  allowNonRoot?: boolean
  /**
   * Any user may submit it without a policy; the handler (or the decision) limits it to what is
   * theirs: revoking their own session keys, casting their own vote.
   * @default false
   */
  selfService?: boolean
  /**
   * Users of the parent organization may submit it inside a sub-organization (sign-in
   * activities the auth proxy forwards for a sub-organization's user).
   * @default false
   */
  allowParentOrganization?: boolean
  /**
   * A caller from a sub-organization may name its parent organization; the activity then runs
   * in the caller's own sub-organization (passkey or wallet login by a client that does not know
   * its sub-organization yet).
   * @default false
   */
  resolveSubOrganization?: boolean
  /**
   * Never waits for root-quorum consensus (votes themselves; sign-in by the proxy user).
   * Activities by non-root or parent-organization callers never wait either.
   * @default false
   */
  skipConsensus?: boolean
  /**
   * Its `run` writes nothing but new rows (fresh ids) that no other activity's decision reads,
   * and the committed data it reads may be as of the request's first reads: on PostgreSQL its
   * transaction is then a snapshot run (`Store.transaction`: no SERIALIZABLE transaction, its rows
   * inserted by one statement). Read-only activities (`ACTIVITIES`) run so without it.
   * @default false
   */
  createsOnly?: boolean
  /**
   * Result fields answered once, to the request that ran it, and never stored (a TOTP secret,
   * recovery codes): the stored activity, its replays and `get_activity` show them emptied. They
   * are the submitter's: one that waited and is run by another user's vote (the root quorum
   * reached) answers that vote with them emptied (`runAsSubmitter`), so a handler whose fields
   * only its submitter may hold never waits for consensus (`skipConsensus`).
   */
  shownOnce?: readonly string[]
  /**
   * Makes the `shownOnce` fields again for the activity's submitter, asking with the credential
   * that submitted it (never a read-only session): a bearer token that credential could ask for
   * anew, made as the run made it (its expiry, its binding), so a replay of the request and the
   * submitter's `get_activity` (polling one that ran after waiting) still carry it. Anyone else sees
   * it emptied, the one whose vote let it run included (`shownTo`). Without it, what is shown once
   * reaches only the request that ran it when that is its submitter's: the submission, or the
   * submitter's own proof of its last step (`latchkey_satisfy_mfa`, `approve_activity` by their
   * passkey); another user's vote that runs it is answered with it emptied (`runAsSubmitter`).
   */
  shownAgain?(
    ctx: { runtime: Runtime; reads: Reads; caller: Caller },
    row: ActivityRow & { result: ActivityResult<P> },
  ): Promise<Partial<ActivityResult<P>>>
  /**
   * Parameters never stored with the activity's intent (a one-time code): its record shows them
   * emptied. Only for handlers that never wait (`selfService` or `skipConsensus`): a waiting
   * activity is parsed again from its stored intent.
   */
  secretParameters?: readonly string[]
  /**
   * Parameters the activity's record keeps only while the activity may still run (awaiting
   * consensus or a gate, it is parsed again from its stored intent): once it has ended (completed,
   * failed or rejected), its intent shows them emptied ('' for a string), as `get_activity` and
   * its replays do. A path names a field of the parameters; `name[]` goes through each
   * item of a list (`'wallets[].encryptedBundle'`). For ciphertext the record no longer needs (an
   * import bundle, which a reader of the record could otherwise submit again).
   */
  clearedWhenDone?: readonly string[]
  /**
   * Parameters that are a bearer credential the activity redeems (a verification token, and the
   * `clientSignature` that binds it): kept in the stored intent only while the activity may still
   * run (as `clearedWhenDone`), and never shown from the record, whatever its status: `get_activity`,
   * a replay's answer and a vote's show them emptied, in records written before this too (`shownTo`).
   */
  bearerParameters?: readonly string[]
  /**
   * The passkey registrations its parameters carry (`'authenticators[]'`, `'users[].authenticators[]'`:
   * items with an `attestation`, or a `credentialId`): every record of the activity written,
   * waiting, failed or completed, records that it showed them (kernel/passkeySightings.ts), so a
   * registration of one of them anywhere else counts as a possible copy.
   */
  passkeyParameters?: readonly string[]
  /**
   * Whether it loosens a guard on spending with these parameters (raises a spending limit, lets it
   * reach more addresses, removes one that still covers someone), read in its transaction before it
   * runs: once any MFA policy is on its submitter, such a change waits for every one of their
   * policies, as a change of who may act does (docs/mfa.md). @default never
   */
  loosensGuard?(reads: Reads, organizationId: string, parameters: ActivityParameters<P>): Promise<boolean>
  /**
   * What its `run` (and `precompute`) will read, from its parameters as sent (not validated yet):
   * read ahead with the request's credential and organization, in one statement on PostgreSQL.
   */
  lookups?(organizationId: string, parameters: unknown): Lookup[]
}

export interface QueryContext {
  store: Reads
  runtime: Runtime
  registry: Registry
  now: number
  organization: OrganizationRow
  caller: Caller
}

/** One query: `parse` validates the body, `run` reads committed state. */
export interface QueryHandler<Req = unknown, Res = unknown> {
  parse(body: Reader): Req
  run(ctx: QueryContext, request: Req): Res | Promise<Res>
}

export type ActivityHandlers = { [P in ActivityPath]?: ActivityHandler<P> }

/** Context of the sub-organization hooks of `create_sub_organization`. */
export interface SubOrganizationHookContext extends ActivityContext {
  subOrganization: OrganizationRow
}

/**
 * Extends the service without editing it: activity/query handlers (added or replaced), extra
 * routes (`/v1/*`, `/dev/*`), a bootstrap step, state kept for the process's life (`State`), its
 * own stamp headers, and the parts of `create_sub_organization` that belong to sign-in (OAuth
 * providers, OTP verification token).
 */
export interface ServicePlugin<State = unknown> {
  name: string
  activities?: ActivityHandlers
  queries?: Record<string, QueryHandler>
  /** Mounts routes on the app; called once, before the activity API routes. */
  routes?(app: Hono<PipelineEnv>, runtime: Runtime): void
  /** Runs on every start inside one transaction, after the dev organization exists; must be idempotent. */
  bootstrap?(tx: Transaction, runtime: Runtime): Promise<void> | void
  /**
   * What the plugin keeps for the process's life (keys read once, engines built on them): `load`
   * runs on every start after `bootstrap` committed, before `routes`, and gets the service app
   * (for in-process calls once it serves); the runtime keeps what it returns under `key`, and
   * handlers read it with `runtime.stateOf(key)`.
   */
  state?: {
    key: PluginStateKey<State>
    load(runtime: Runtime, app: Hono<PipelineEnv>): State | Promise<State>
  }
  /**
   * Releases what the plugin opened (an SMTP transport) when the service closes: after the
   * drain, once the job worker stopped, before the store closes.
   */
  close?(runtime: Runtime): Promise<void> | void
  /**
   * Work the plugin runs in the background while the service serves (the sending wing's send
   * worker): called once every plugin's state is loaded, before the first request. What it
   * returns stops it: the service calls that on drain (`runtime.lifecycle.onDrain`) and on close,
   * and it finishes or hands back what is under way.
   */
  start?(runtime: Runtime): (() => Promise<void> | void) | undefined
  /**
   * Facts the admin listener's `/readyz` adds to its report, by field (the sending wing's
   * `sponsors`): informative only, they never make the service unready. Read on every probe, so
   * it answers from memory (no database or network call).
   */
  readiness?(runtime: Runtime): Record<string, unknown> | undefined
  /**
   * Verifiers of the plugin's own stamp headers, by header name: the authentication of submit
   * routes tries them after `X-Stamp` and `X-Stamp-WebAuthn`.
   */
  stampVerifiers?: Record<string, StampVerifier>
  /**
   * True when the caller is the plugin's own service user, whose key never leaves the service (the
   * auth proxy's user): its stamped calls may carry a per-call nonce in their fingerprint, and
   * they spend no organization's or credential's rate limit. `reads`, when given, are the
   * request's own (`requestReads`), read ahead.
   */
  ownsCaller?(caller: Caller, runtime: Runtime, reads?: Reads): Promise<boolean> | boolean
  /**
   * What `authorize` and `vouchesFor` read for a request to `organizationId`: the pipeline reads
   * it with the request's credential and organization (one round trip on PostgreSQL) and hands
   * the result to them as `request.reads`.
   */
  lookups?(organizationId: string): Lookup[]
  /** Vouches for a caller on a path: an `allowNonRoot` handler then admits it without a policy. */
  vouchesFor?(
    request: { path: string; caller: Caller; organization: OrganizationRow; reads: Reads },
    runtime: Runtime,
  ): Promise<boolean> | boolean
  /**
   * Extra authorisation after the built-in checks, for activities and queries alike: throw a
   * ApiError to refuse (the sign-in plugin confines the auth proxy's user with it).
   */
  authorize?(
    request: {
      kind: 'activity' | 'query'
      path: string
      caller: Caller
      organization: OrganizationRow
      /** The request's reads: what the plugins' `lookups` asked for is already read. */
      reads: Reads
    },
    runtime: Runtime,
  ): Promise<void> | void
  /**
   * A key on which the activity's transaction runs one at a time with every other activity given
   * the same key: in this process (a queue), and across the database's processes (an advisory
   * lock taken before the transaction begins, given back after its commit). The limits wing
   * orders on it every writer of an organization's limit state (the signatures under its limits,
   * which all rewrite a limit's usage row, and the changes to its limits). An ordered activity
   * that may run on a snapshot (read-only or `createsOnly`) runs at snapshot isolation instead of
   * SERIALIZABLE (`Store.transaction`'s `isolation`): the key must order every writer of what it
   * writes beyond new rows. Undefined: no ordering. Asked once per new activity, before its transaction.
   */
  serializes?(request: {
    path: string
    organization: OrganizationRow
    /** The request's reads (`requestReads`): what the handler's `lookups` asked for is read. */
    reads: Reads
  }): Promise<string | undefined> | string | undefined
  /**
   * What an activity this plugin orders (`serializes` gave a key) must read after its lock (the
   * limits wing: the organization's limits and usage rows). On PostgreSQL they are read as the
   * transaction's first statement after its lock, and its reads of them are answered from that
   * (`Store.transaction`'s `readAhead`); its other reads from the request's, made before the lock
   * (`earlier`).
   */
  serializedLookups?(organizationId: string): Lookup[]
  /**
   * Holds activities the decision allowed until more is proven (the MFA wing's factors): asked in
   * the activity's transaction before it runs, and on `approve_activity` of an activity it holds.
   */
  gate?: ActivityGate
  /**
   * Confines a caller whatever the policies and the root quorum say (a session profile's scope,
   * issue 37): asked in the activity's transaction before its decision, for every new activity;
   * a refusal it answers is the decision (OUTCOME_DENY_EXPLICIT, recorded, the activity FAILED).
   * It answers undefined at once for a caller it does not confine (most of them: no read).
   */
  confine?(input: GateInput): Promise<ApiError | undefined> | ApiError | undefined
  /**
   * Deletes what the plugin keeps of users that are deleted (`delete_users`), or of a whole
   * sub-organization (`delete_sub_organization`: `organizationId` set, `userIds` every user of
   * it), in the deleting activity's transaction: a second factor's sealed secret, a spending
   * limit, a session profile, a webhook endpoint (whose prune job it queues on `runtime`). What is
   * the record (activities, sends) stays.
   */
  forget?(
    tx: Transaction,
    gone: { userIds: readonly string[]; organizationId?: string },
    runtime: Runtime,
  ): Promise<void>
  subOrganization?: {
    /**
     * Links `oauthProviders` of a root user: each OIDC token verified, or the `oidcClaims` the
     * caller vouches for (the activity decides who may), one account per identity either way.
     */
    oauthProviders?(
      ctx: SubOrganizationHookContext,
      user: UserRow,
      providers: (OauthProviderParams | OauthProviderParamsV2)[],
      field: string,
    ): void | Promise<void>
    /**
     * Checks the OTP `verificationToken` (proves a root user's e-mail or phone), spends it and
     * marks that contact verified. A token bound to a key is redeemed only by that key: the
     * request stamped by it, or `proof.clientSignature` by it. Otherwise it refuses, or, with
     * `proof.otherwise: 'unverified'`, resolves false and spends nothing.
     */
    verificationToken?(
      ctx: SubOrganizationHookContext,
      token: string,
      rootUsers: UserRow[],
      proof: VerificationTokenProof,
    ): Promise<boolean>
  }
}

/** An activity the decision allowed, as a gate sees it before it runs. */
export interface GateInput {
  tx: Transaction
  runtime: Runtime
  /** The activity (not written yet when it was just submitted). */
  row: ActivityRow
  organization: OrganizationRow
  /** Who submitted it. */
  caller: Caller
  /**
   * Whether an activity (this one, or the one a vote approves) loosens a guard on spending
   * (`ActivityHandler.loosensGuard`, with its parameters as recorded): set by `heldBy` for the gates.
   */
  loosensGuard?: (row: ActivityRow) => Promise<boolean>
  /** What `prepare` fixed that policies read (`ActivityHandler.policyFacts`), for a handler that has them. */
  facts?: PolicyFacts
  /**
   * The facts `prepare` will fix, not known yet (`ActivityHandler.policyFactFields`): the activity
   * is judged before its `prepare` (a send's dry run), or was not prepared (its dry run refused it
   * or left it waiting for consensus; it is prepared and judged with them before it runs). A
   * confinement then refuses only what no value of them could let through: reading one is
   * neither a yes nor a no.
   */
  pendingFacts?: PolicyFactFields
}

/**
 * A plugin's hold on allowed activities (`ServicePlugin.gate`): `hold` decides, in the activity's
 * transaction, whether it waits in `status` instead of running (and records what it waits for);
 * `approve` is `approve_activity` on an activity in `status`, stamped by `ctx.caller`: it records
 * what that stamp proves and answers true once the activity may run (the caller then runs it, once,
 * in the same transaction).
 */
export interface ActivityGate {
  status: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'
  hold(input: GateInput): Promise<boolean>
  approve(ctx: ActivityContext, activity: ActivityRow): Promise<boolean>
}

/** How a request proves the key a verification token is bound to (see `verificationToken`). */
export interface VerificationTokenProof {
  /** The request's `clientSignature` as sent (the plugin reads it). */
  clientSignature?: unknown
  /** What an unproven bound key means: a refusal (sign-up), or an unverified contact. */
  otherwise: 'refuse' | 'unverified'
}

/** Identity helper that gives a handler literal its parameter types. */
export const defineActivity = <P extends ActivityPath>(
  _path: P,
  handler: ActivityHandler<P>,
): ActivityHandler<P> => handler

/**
 * Identity helper that types a query handler by its path: `run` answers the path's response;
 * `parse` returns whatever the handler reads from the body.
 */
export const defineQuery = <P extends QueryPath, Req>(
  _path: P,
  handler: QueryHandler<Req, QueryResponse<P>>,
): QueryHandler<Req, QueryResponse<P>> => handler

/** What runs for which path: activity and query handlers, and the plugins they came with. */
export class Registry {
  readonly activities = new Map<ActivityPath, ActivityHandler>()
  readonly queries = new Map<string, QueryHandler>()

  constructor(readonly plugins: readonly ServicePlugin[]) {}

  /** Adds handlers, replacing any registered for the same path. */
  add(handlers: { activities?: ActivityHandlers; queries?: Record<string, QueryHandler> }): void {
    for (const [path, handler] of Object.entries(handlers.activities ?? {}))
      if (handler) this.activities.set(path as ActivityPath, handler as ActivityHandler)
    for (const [path, handler] of Object.entries(handlers.queries ?? {})) this.queries.set(path, handler)
  }
}
