import type {
  AccountSpec,
  ActivityStatus,
  ApiKeyCurve,
  AuthenticatorTransport,
  CredentialType,
  PolicyOutcome,
  ProxySettings,
  RevertChainEntry,
  SolanaFailureDetails,
  SpendingLimitAsset,
  SpendingLimitScope,
  SpendingLimitWindow,
} from '@latchkey/protocol'

/**
 * The service's data model. Every record is a plain JSON object, immutable once stored (the store
 * freezes it): change one with `tx.put(table, { ...record, field })`. Times are epoch milliseconds.
 */
export interface Row {
  id: string
  createdAt: number
  updatedAt: number
}

export interface OrganizationRow extends Row {
  name: string
  /** Set on sub-organizations: the organization that created it. */
  parentOrganizationId?: string
  rootUserIds: string[]
  rootQuorumThreshold: number
  disableEmailRecovery?: boolean
  disableEmailAuth?: boolean
  disableSmsAuth?: boolean
  disableOtpEmailAuth?: boolean
}

export interface UserRow extends Row {
  organizationId: string
  userName: string
  userEmail?: string
  userPhoneNumber?: string
  /**
   * Set when `userEmail` was stored without proof (no verification token its key redeemed, and
   * not set in the parent organization): no code is sent to it and no login is routed by it.
   */
  userEmailUnverified?: true
  /** The same for `userPhoneNumber`. */
  userPhoneNumberUnverified?: true
  /**
   * Index fields the store computes as it writes the row (`DERIVED`), never set by a writer: the
   * contact of each kind when it is verified (`verifiedContactOf`), what account lookups and login
   * routing find a user by, so that unverified copies of someone's address cost them no reads
   * (migration 0021_verified_contacts).
   */
  verifiedEmail?: string
  verifiedPhone?: string
}

export interface ApiKeyRow extends Row {
  organizationId: string
  userId: string
  name: string
  /** Lowercase hex, as carried in stamps (compressed for P-256/secp256k1, raw 32 bytes for ed25519). */
  publicKey: string
  curve: ApiKeyCurve
  credentialType: CredentialType
  /** Lifetime in seconds from `createdAt`; absent for keys that never expire. */
  expirationSeconds?: string
  /** A session key issued under a session profile (issue 37): its scope confines every activity. */
  sessionProfileId?: string
  /**
   * `apiKeyInOrganization(publicKey, organizationId)`: what authentication looks a stamp's key up
   * by in the organization a request names, so a key held in many organizations (a back end's key
   * in each of its users' sub-organizations) costs one row, not one per organization. Rows written
   * before migration 0016 lack it in their document; their column was filled by the migration.
   */
  keyInOrganization: string
  /**
   * Registered by someone other than the operator (a sign-up through the auth proxy, a user's
   * `create_api_keys` or `create_users`), and not yet used by its holder where it is registered:
   * anyone may register a wallet's public key, so such a row routes no sign-in that names the
   * parent and no account lookup by public key, unless its account is one only it gets into
   * (pipeline/walletKeys.ts). Cleared once the key stamps a request naming its organization, or
   * signs in to such an account. Absent on rows written before it existed.
   */
  unproven?: true
  /**
   * A session's origin: on a login (session) key, the passkey or API key whose stamp opened it; on a
   * key a sign-up registered with a lifetime (its first session), the passkeys registered with it
   * (`firstSessionOrigin`: not the lifelong keys beside it). Carried forward when the session logs
   * in again with its own key (a refresh), so removing one of them ends every session it opened and
   * their renewals (`endSessionsOpenedWith`). Empty for a session a one-time token opened (an e-mail
   * or SMS code, an OIDC token, spent at the login) or a sign-up with no passkey: nothing to remove.
   * Absent on other registered keys, and on keys written before it existed (migration 0024 gave the
   * ones it could theirs and ended the rest); one an older instance writes since is a login key,
   * ended by the removal of any passkey or registered key of its user and opening no session, or a
   * sign-up's first session key, which descends from the passkeys registered with its user.
   */
  origin?: SessionOrigin
  /**
   * An index field the store computes as it writes the row (`DERIVED`), never set by a writer: on
   * a registered key (`isRegisteredKey`), `registeredKeyOf(publicKey, !unproven)`; absent on a
   * login's session key. What a wallet sign-in naming the parent and the account lookup by public
   * key read a key's holders by (migration 0026_registered_keys): the proven ones, which nobody
   * but the key's holder (or an operator) makes, apart from the unproven copies anyone may
   * register, and neither among the session keys a login names without the key's signature.
   */
  registeredKey?: string
}

/**
 * The API key credential types a key's own registration gives it (`create_api_keys`, a user's
 * creation, a sign-up), as opposed to a login's session key, whose public key the login names
 * without that key's signature (pipeline/walletKeys.ts).
 */
export const REGISTERED_KEY_TYPES: ReadonlySet<string> = new Set([
  'CREDENTIAL_TYPE_API_KEY_P256',
  'CREDENTIAL_TYPE_API_KEY_SECP256K1',
  'CREDENTIAL_TYPE_API_KEY_ED25519',
])

/** Whether `key` is one someone registered (`REGISTERED_KEY_TYPES`), not a login's session key. */
export const isRegisteredKey = (key: Pick<ApiKeyRow, 'credentialType'>): boolean =>
  REGISTERED_KEY_TYPES.has(key.credentialType)

/** `ApiKeyRow.registeredKey` of the registered keys of `publicKey` that proved themselves, or of those that did not. */
export const registeredKeyOf = (publicKey: string, proven: boolean): string =>
  `${proven ? 'proven' : 'unproven'}:${publicKey}`

/** What a read-write session descends from (`ApiKeyRow.origin`): it ends when any of them is removed. */
export interface SessionOrigin {
  authenticatorIds?: string[]
  apiKeyIds?: string[]
  /**
   * The sign-in a renewal belongs to: the id of the first session key of its chain of refreshes
   * (`stamp_login` stamped by a session key), carried forward by each; absent on that first key,
   * whose own id names it (`signInOf`). Ending a session ends its whole sign-in (`endSignIns`):
   * a renewal someone made with a copied key does not outlive the owner's logout.
   */
  signIn?: string
  /**
   * The key whose `stamp_login` made this renewal (absent on a sign-in's first key): the one key
   * of its sign-in it may give back without ending the rest (`endSignIns`: the kit's refresh
   * deletes the key it renewed).
   */
  renewedFrom?: string
  /**
   * On a session issued under a session profile by a session key (a confined login an app makes
   * from its own): the sign-in of that key. The profiled session is a sign-in of its own (its
   * logout ends only it), and ends when the issuing sign-in ends (`endSignIns`): a copy of a
   * session key cannot mint itself a confined session that outlives the owner's logout.
   */
  issuedBy?: string
}

/** An API key's `keyInOrganization`: its public key in one organization. */
export const apiKeyInOrganization = (publicKey: string, organizationId: string): string =>
  `${publicKey}@${organizationId}`

export interface AuthenticatorRow extends Row {
  organizationId: string
  userId: string
  name: string
  /** base64url credential id, as the browser reports it. */
  credentialId: string
  /** base64url COSE public key, as @simplewebauthn stores it. */
  cosePublicKey: string
  /** Hex of the public key for the `credential.publicKey` field (COSE bytes). */
  publicKeyHex: string
  counter: number
  aaguid: string
  model: string
  attestationType: string
  transports: AuthenticatorTransport[]
  /**
   * Registered by someone other than the operator (a sign-up through the auth proxy, a user's
   * `create_authenticators` or `create_users`), and not yet used by its holder where it is
   * registered: with a "none" attestation a registration proves nothing about who holds the key
   * (its credential id and public key are all it takes), so such a row routes no passkey sign-in
   * that names the parent unless its account is one only it gets into (pipeline/authenticate.ts, `passkeyFor`).
   * Cleared once the passkey stamps a request naming its organization, or signs in to such an
   * account. Absent on rows written before it existed.
   */
  unproven?: true
}

export interface OauthProviderRow extends Row {
  organizationId: string
  userId: string
  providerName: string
  issuer: string
  audience: string
  subject: string
}

export interface UserTagRow extends Row {
  organizationId: string
  name: string
  userIds: string[]
}

export interface WalletRow extends Row {
  organizationId: string
  name: string
  /** The mnemonic, sealed with the master key. */
  sealedMnemonic: string
  mnemonicLength: number
  exported: boolean
  imported: boolean
}

export interface WalletAccountRow extends Row, AccountSpec {
  organizationId: string
  walletId: string
  address: string
  publicKey: string
  /** The account's private key, sealed (signing opens it instead of re-deriving from the mnemonic). */
  sealedPrivateKey: string
}

export interface ActivityRow extends Row {
  organizationId: string
  /** Path under /public/v1/submit/ (`create_wallet` ...). */
  path: string
  type: string
  status: ActivityStatus
  /** The validated parameters, echoed as `<name>Intent`. */
  intent: Record<string, unknown>
  result?: Record<string, unknown>
  failure?: { code: number; message: string; details: Record<string, unknown> }
  /** sha256 hex of the stamping credential's id and the submitted body bytes. */
  fingerprint: string
  /** Who submitted it (the handler runs as this user when consensus completes). */
  userId: string
  credentialId: string
  /** Organization of the submitting user (differs from `organizationId` for parent-org calls). */
  callerOrganizationId: string
  /**
   * The activity its answer showed instead of itself (a vote, a second factor's proof: the one
   * voted on), so that a replay of the request answers the same.
   */
  respondsWith?: string
}

export interface VoteRow extends Row {
  organizationId: string
  activityId: string
  userId: string
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED'
  message: string
  publicKey: string
  signature: string
  scheme: string
}

export interface PolicyRow extends Row {
  organizationId: string
  name: string
  effect: 'EFFECT_ALLOW' | 'EFFECT_DENY'
  /** Policy-language expressions, '' when absent (checked by the parser when stored). */
  condition: string
  consensus: string
  notes: string
}

export interface PolicyEvaluationRow extends Row {
  organizationId: string
  activityId: string
  voteId: string
  outcomes: { policyId?: string; outcome: PolicyOutcome }[]
}

/** Auth-proxy configuration of a parent organization (written by the proxy plugin). */
export interface ProxyConfigRow extends Row {
  organizationId: string
  enabled: boolean
  settings: ProxySettings
  proxyUserId?: string
  /** The proxy API key's P-256 private key, sealed. */
  sealedProxyPrivateKey?: string
}

export interface FiatCredentialRow extends Row {
  organizationId: string
  onrampProvider: string
  projectId?: string
  publishableApiKey: string
  /** Already encrypted by the client; sealed again at rest. */
  sealedSecretApiKey: string
  sealedPrivateApiKey?: string
  sandboxMode: boolean
}

/** A standalone private key (`create_private_keys`, `import_private_key`), sealed at rest. */
export interface PrivateKeyRow extends Row {
  organizationId: string
  name: string
  curve: AccountSpec['curve']
  /** secp256k1: 33-byte compressed hex; ed25519: 32-byte hex. */
  publicKey: string
  sealedPrivateKey: string
  addresses: { format: AccountSpec['addressFormat']; address: string }[]
  privateKeyTags: string[]
  exported: boolean
  imported: boolean
}

/** A pending `init_import_wallet`: the target key the client encrypts its mnemonic to. */
export interface ImportTargetRow extends Row {
  organizationId: string
  userId: string
  sealedTargetPrivateKey: string
  targetPublic: string
}

/** Service-wide secrets and the dev bootstrap (one row, id `service`). */
export interface ServiceRow extends Row {
  sealedSignerKey: string
  signerPublicKey: string
  sealedSessionKey: string
  sessionPublicKey: string
  /** The dev organization and its root key: made by a `dev` service only, never in production. */
  devOrganizationId?: string
  devUserId?: string
  devApiKeyId?: string
  sealedDevApiPrivateKey?: string
  devApiPublicKey?: string
  /** The auth-proxy configuration of the dev organization, or of the production parent organization. */
  authProxyConfigId?: string
  /** The production parent organization (`latchkey-service init`), its root user and API key. */
  parentOrganizationId?: string
  parentRootUserId?: string
  parentRootApiKeyId?: string
}

/** Free-form rows for plugins (OTP challenges, OIDC replay guards, outbox ...), keyed by `kind`. */
export interface PluginRow extends Row {
  kind: string
  organizationId?: string
  data: Record<string, unknown>
  /**
   * When the row may be swept (epoch ms): a column only (`DERIVED`, `staleAtKey`), never kept in
   * the document, so every write of the row gives it again. With `kind`, an index: a sweep reads
   * the stale rows of its kind a page at a time (`pageBy`), never the live ones. Absent: never.
   */
  staleAt?: number
}

/** `PluginRow.staleAt` as its column holds it: 15 digits, so text order is time order. */
export const staleAtKey = (ms: number): string => String(Math.max(0, Math.floor(ms))).padStart(15, '0')

// Durable jobs (jobs/): the queue's rows.
/** Where a job is: due or waiting (`pending`), claimed by a worker (`running`), or given up (`failed`). */
export type JobState = 'pending' | 'running' | 'failed'

/**
 * One durable job (`jobs/JobQueue.ts`): enqueued in the transaction of the change that needs it,
 * run by exactly one worker after the commit, outside any transaction. A job that succeeds is
 * deleted; one that fails for good stays, `failed`, with its reason.
 */
export interface JobRow extends Row {
  /** Names the handler that runs it. */
  kind: string
  state: JobState
  /** Not run before this time (epoch ms): its enqueue time, then each retry's backoff. */
  runAfter: number
  /** Runs started so far (a claim counts one before the handler runs). */
  attempts: number
  /** The claim holding it while `running`: the worker's id, a slash, the claim's own id. */
  claimedBy?: string
  /** A `running` job whose lease ends before now is claimable again (its worker died). */
  claimedUntil?: number
  /** The payload as JSON, or sealed under the master key when it holds a secret. */
  payload: { json: string } | { sealed: string }
  /**
   * Its kind while it is `pending` (`DERIVED`, never set by a writer): with `runAfter`, an index
   * (migration 0023_pending_jobs_by_kind), by which a worker reads the earliest due jobs of a kind
   * it can start when a front of jobs it cannot (a capped kind at its cap) fills its read of the
   * pending jobs in order.
   */
  pendingKind?: string
  /**
   * The last run ended without a known outcome (its worker died holding the lease, or it timed
   * out): the next run must not assume the work was not done.
   */
  uncertain?: boolean
  /** Why the last run failed (a bounded reason, never payload content). */
  lastError?: string
}

// Master-key rotation
/** A version of the master key: its number and a check value that recognises the key (never the key). */
export interface MasterKeyVersion {
  version: number
  /** HMAC-SHA256 of a fixed label under the key, hex: tells which key is which version. */
  check: string
  /** Set when a rotation re-sealed every secret away from this version: it is needed no more. */
  retiredAt?: number
}

/**
 * The master key's versions (one row, id `keyring`): which one seals (`activeVersion`), which can
 * still be found in sealed values, and the progress of a rotation that re-seals them.
 */
export interface KeyringRow extends Row {
  keys: MasterKeyVersion[]
  /** The version new secrets are sealed under. */
  activeVersion: number
  /** A rotation under way: every secret sealed under another version is re-sealed under `to`. */
  rotation?: {
    to: number
    /** The table being walked and the last id re-sealed in it (ids sort the same on every backend). */
    table: string
    afterId: string
    /** Sealed values re-sealed so far. */
    resealed: number
    /** Which walk over the tables this is (the last one finds nothing left to re-seal). */
    pass: number
    /** Sealed values this pass re-sealed. */
    passResealed: number
    startedAt: number
  }
  /** When the last rotation finished: only `activeVersion` is needed from then on. */
  rotatedAt?: number
}

// ---- sending: sends and their broadcast state, outer nonces, sponsor keys, sponsored gas ----

/**
 * One send (`eth_send_transaction`, `sol_send_transaction`, `eth_send_raw_transaction`): the
 * signed transaction, committed with the activity, and its broadcast job. The worker broadcasts it
 * after commit, then tracks it until `status` is final.
 */
export interface SendTransactionRow extends Row {
  organizationId: string
  /**
   * An EVM send's: epoch ms of the look (`evmSender`'s `track`) that found its sender's mined
   * count past its nonce with no version of it mined (another transaction took the nonce). A look
   * `NONCE_TAKEN_CONFIRM_MS` later that finds the same ends it FAILED; one that finds the count
   * back below its nonce (a reorg, a node behind a load balancer a block behind) clears it.
   */
  nonceTakenSeenAt?: number
  activityId: string
  caip2: string
  /** The account whose nonce the transaction uses (the sponsor's for a sponsored send). */
  sender: string
  /** The user's account (`from`); the sender too unless sponsored. */
  account: string
  sponsored: boolean
  /** The sponsor row whose key signed the outer transaction. */
  sponsorId?: string
  /** Hashes of the versions a replacement superseded (any of them may be the one included). */
  priorHashes?: string[]
  /**
   * Hashes of versions a node refused that the send no longer carries (`evmSender`: a refused
   * replacement it went back from, one made again without its authorization, a fill signed again):
   * another instance past its lease, or another node, may have handed that very version to a node,
   * which may mine it, so their receipts are asked as the other versions' are. The latest
   * `MAX_REFUSED_VERSIONS`.
   */
  refusedHashes?: string[]
  /**
   * A fill: the id of the send the node refused, whose nonce this 0-value transfer from its sender
   * to itself takes so the sends after it can be mined (`evmSender`). A sponsor's is the operator's:
   * no user's caps count it, and it is followed until a transaction at its nonce is mined. A user's
   * account's (unsponsored) is the account's: its native spending limits count its fee
   * (`reservedFee`), and it expires as an unsponsored send does (`SEND_EXPIRES_AFTER_MS`), its
   * nonce then a hole of the account's counter. No webhook reports either.
   */
  fills?: string
  nonce?: string
  /**
   * A send whose nonce the service's counter of its sender gave it. `eth_send_transaction`: every
   * send that did not name its `nonce` (`takeNonce`), and one that named a hole of the counter (no
   * batch whose authorization takes the next nonce). A raw send (`eth_send_raw_transaction`): its
   * sender an account of its own organization, the counter not yet past the nonce (moved past it)
   * or holding it as a hole (taken out). Only such a send's nonce goes back to the counter, or is
   * filled, when the node refuses it (`evmSender`'s `failUnmined`); no other send touches any
   * counter (a nonce the caller named, another organization's account, a sponsor, an address
   * outside the service, a nonce the counter had already passed). Absent on `eth_send_transaction`
   * rows written before it was recorded there (or by an instance not yet upgraded): a sponsored
   * one's nonce is the counter's (a sponsored send names none); an unsponsored one's is when its
   * activity named no `nonce`.
   */
  countedNonce?: true
  /**
   * The credential that submitted the send, as the spending limits judged it when it was recorded:
   * its kind, its id and a session key's session profile. A fill of its nonce is counted under the
   * limits of that credential (`evmSender`'s `reserveFill`), not of whatever is left of it when the
   * node's refusal is seen: a session that signed out meanwhile still has its profile's and its API
   * key's limits count the fill. Absent on rows written before it was recorded (or by an instance
   * not yet upgraded, during a rolling upgrade): the submitter is looked up as they are then.
   */
  submittedWith?: {
    kind: 'API_KEY' | 'WEBAUTHN' | 'READ_ONLY_SESSION'
    id: string
    sessionProfileId?: string
  }
  /** The signed transaction, 0x hex (EVM) or base64 wire transaction (Solana). */
  signedTransaction: string
  /** Transaction hash (EVM) or first signature, base58 (Solana). */
  txHash: string
  status: 'PENDING' | 'BROADCASTED' | 'INCLUDED' | 'FAILED' | 'CANCELLED'
  /**
   * How many times `status` changed since the send was recorded: the write that changes it counts
   * it (`sendWorker`'s `update`, in its transaction, so a rerun counts the same). The change's
   * SEND_TRANSACTION_STATUS_UPDATES event is named by it (`<send>.status.<n>.<STATUS>`), so a send
   * BROADCASTED again (a replacement, or back to the version a refused one replaced) is a new
   * event, never one an earlier status change already named. Absent: none counted yet (a row
   * written before it was, whose events were named `<send>.status.<STATUS>`).
   */
  statusChanges?: number
  /**
   * A Solana send whose blockhash the cluster's node did not know when it was signed: perhaps
   * another cluster's, so ending expired here does not give back what it reserved (`solanaSender`).
   */
  blockhashUnseen?: true
  /**
   * Fees signed into the transaction, decimal wei (EVM); a replacement raises them. Absent only on a
   * raw send (`eth_send_raw_transaction`): bytes the service did not sign as a send.
   */
  fees?: { maxFeePerGas: string; maxPriorityFeePerGas: string; gasLimit: string }
  /**
   * The most its fees can cost the account, decimal wei, as its native spending limits counted
   * them when it was signed (an unsponsored EVM send: the gas limit times the highest fee a
   * replacement may offer). Once mined, those limits keep what it paid instead (`settleSpend`).
   */
  reservedFee?: string
  /**
   * The L1 data fee counted for it, decimal wei (an OP Stack or Scroll chain's EVM send: the
   * oracle's bound at signing, with headroom), in `reservedFee` or the sponsor's wei caps. Once
   * mined, a receipt that reports its `l1Fee` says what it paid; one that does not leaves this counted.
   */
  l1Fee?: string
  /**
   * The operator fee counted for it, decimal wei (an OP Stack chain's EVM send since Isthmus: the
   * oracle's `getOperatorFee` of its gas limit at signing), in `reservedFee` or the sponsor's wei
   * caps beside `l1Fee`. Once mined, a receipt that reports the operator fee's parameters (or an
   * `l1Fee` without them: none) says what it paid; one that says nothing leaves this counted.
   */
  operatorFee?: string
  /**
   * A sponsored EVM send's highest `maxFeePerGas` that its wei caps already counted, decimal wei:
   * at signing they count its gas limit at the most a replacement of it may offer (its fee raised
   * `replacementBumpPercent` up to `maxReplacements` times, under the ceilings), so its
   * replacements up to it count nothing more and no cap refuses one. A replacement past it (a
   * ceiling raised since) counts the difference. Absent on sends signed before this rule (each
   * raise counted then) and on fills (counted as they are signed).
   */
  prepaidMaxFeePerGas?: string
  /**
   * The top-level organization whose sponsorship caps and fee ceilings judge a sponsored EVM send
   * and its fill: what the worker counts and replaces it under once its sub-organization is
   * deleted. Absent on sends signed before it was recorded.
   */
  capsOrganizationId?: string
  /**
   * Index fields the store computes as it writes the row (`DERIVED`), never set by a writer: while
   * the send is open (`OPEN_STATUSES`), its organization's id, its chain and transaction hash
   * (`caip2 txhash`) and its chain and account (`caip2 account`), in lower case; absent once final.
   * What the open-send cap counts an organization's open sends by, a resubmission finds its open
   * send by, and a batch asks whether its account has a send in flight by, each reading its own
   * rows (migration 0020_open_sends).
   */
  openIn?: string
  openHash?: string
  openAccount?: string
  /** Broadcast attempts so far. */
  attempts: number
  /**
   * A fill signed again (`evmSender`'s `refill`, which counts an attempt): its `attempts` then. An
   * attempt past it is one of this version's (a lost answer counts one): a node may hold this
   * version, which is kept among `priorHashes` when it is signed again. Absent: any attempt may be.
   */
  signedAtAttempt?: number
  /** Epoch ms before which the worker leaves it alone (backoff, or another instance's lease). */
  notBefore: number
  /** Epoch ms of the last accepted broadcast. */
  broadcastAt?: number
  replacements: number
  receipt?: {
    blockNumber: string
    blockHash: string
    gasUsed: string
    effectiveGasPrice: string
    status: 'success' | 'reverted'
  }
  /** Solana slot of inclusion. */
  slot?: string
  error?: {
    message: string
    revertData?: string
    revertReason?: string
    /** The published revert chain (EVM), outermost first. */
    revertChain?: RevertChainEntry[]
    /** Why a Solana send failed, as the published `v1SolanaFailureDetails`. */
    solana?: SolanaFailureDetails
  }
}

/** The next outer nonce of an account on a chain (`<caip2>|<address lowercase>`), assigned in the activity's transaction. */
export interface NonceRow extends Row {
  next: string
  /**
   * Nonces below `next` that the counter gave and no transaction will use, lowest first (a refused
   * sponsored send's authorization, a fill a spending limit had no room for): the account's next
   * send takes the lowest still at or above the node's count (`takeNonce`), so its later sends do
   * not wait behind it for good.
   */
  holes?: string[]
  /**
   * The least `next` the counter ever starts again from (`takeNonce`'s `restart`): one past a
   * nonce the service saw used (a batch that ran with it), since a node behind a load balancer
   * may answer a count a block old.
   */
  least?: string
}

/** A sponsor account held by the service: `default` or an organization id, per chain family. */
export interface SponsorRow extends Row {
  /** `eip155` or `solana`. */
  family: string
  address: string
  sealedPrivateKey: string
}

/** What a sponsored send may cost (gas limit on EVM, fee in lamports on Solana), counted against the caps when signed. */
export interface GasUsageRow extends Row {
  /**
   * `<organizationId>|<end user>|<UTC day>`: the end user is the sub-organization's id for a send in
   * one (rows before that: the caller's user id), the caller's user id in the parent itself.
   */
  userDay: string
  /** `<organizationId>|<UTC month>`. */
  organizationMonth: string
  gas: string
  sendTransactionId: string
}

// The wings' rows, each wing's below its own line.
// ---- wing: spending limits (issue 37) ----
/** A spending limit (limits/, issue 37): the definition; its window's use is its `spendingLimitUsage` row. */
export interface SpendingLimitRow extends Row {
  organizationId: string
  name: string
  scope: SpendingLimitScope
  window: SpendingLimitWindow
  asset: SpendingLimitAsset
  /** The cap per window, decimal. */
  amount: string
  /** Lower-case EVM addresses; empty: anywhere. */
  allowedDestinations: string[]
}

/** One spend counted against a limit: when, how much (decimal), and what signed it (a release names it). */
export interface SpendEntry {
  at: number
  amount: string
  /**
   * The send that spent it (what a release gives back); absent for a signature (never given back)
   * and once merged with another entry.
   */
  ref?: string
}

/**
 * The spends a limit counts (id = the limit's id): one row per limit, read and rewritten by every
 * spend in the signing transaction, so concurrent spends conflict on it and the database
 * serialises them.
 */
export interface SpendingLimitUsageRow extends Row {
  organizationId: string
  /**
   * The spends still inside the window, oldest first, as one line of text (limits/spendLog.ts
   * reads and writes it), with the last one's time, their sum and their number.
   */
  spends?: string
  lastAt?: number
  total?: string
  count?: number
  /** Rows written before the spend log (wave 13) keep their spends here; rewritten as `spends`. */
  entries?: SpendEntry[]
}

/**
 * A session profile (limits/, issue 37): a login naming it issues a session key whose every
 * activity must satisfy `scope` (a policy-language condition) and that lives `expirationSeconds`.
 */
export interface SessionProfileRow extends Row {
  organizationId: string
  name: string
  scope: string
  expirationSeconds?: string
  notes?: string
}
// ---- wing: MFA (issue 38) ----
/** An MFA policy on one user (mfa/): activities of theirs its `condition` matches wait for `steps`. */
export interface MfaPolicyRow extends Row {
  organizationId: string
  userId: string
  name: string
  condition: string
  /** Ordered steps, each proven by any one of its methods (`type`, optional `id`). */
  steps: { any: { type: string; id?: string }[] }[]
  order: number
  notes: string
}

/** A second factor of a user: a TOTP secret, sealed; `lastStep` is the last time step accepted. */
export interface MfaFactorRow extends Row {
  organizationId: string
  userId: string
  kind: 'TOTP'
  name: string
  sealedSecret: string
  confirmed: boolean
  lastStep: number
}

/** One single-use recovery code of a user, kept as a keyed hash (`hash`, HMAC under the wing's sealed key). */
export interface MfaRecoveryCodeRow extends Row {
  organizationId: string
  userId: string
  hash: string
}

/**
 * What an activity held in ACTIVITY_STATUS_AUTHENTICATORS_NEEDED waits for (id = the activity's):
 * the matched policies' steps as they were when it was held, and the methods proven so far.
 */
export interface MfaChallengeRow extends Row {
  organizationId: string
  userId: string
  policies: { policyId: string; steps: { any: { type: string; id?: string }[] }[] }[]
  satisfied: { policyId: string; step: number; type: string; id: string }[]
  /** The e-mail or SMS code sent for this challenge (mfa/contactFactor.ts): it alone proves it, once. */
  contactCode?: { type: string; otpId: string }
  /**
   * How many times the activity's challenges were satisfied (absent: never). An activity held
   * again before it runs (a send prepared again, with another fee) may be satisfied a second
   * time: each `LATCHKEY_MFA_SATISFIED` is an event of its own.
   */
  satisfactions?: number
}
// ---- wing: webhooks (issue 39) ----
/** A webhook endpoint (webhooks/): where an organization's (and its sub-organizations') events go. */
export interface WebhookEndpointRow extends Row {
  organizationId: string
  url: string
  name: string
  isActive: boolean
  subscriptions: { eventType: string; filtersJson?: string; isActive: boolean }[]
  /**
   * The sequence number of the endpoint's last numbered event (0: none yet). Events are numbered
   * by the endpoint's sender, in the order their transactions committed, never in them.
   */
  sequence: number
  /** Failed deliveries in a row; reset by a success. */
  consecutiveFailures: number
  /** Set when the service paused it (too many failures); cleared by `update_webhook_endpoint` `isActive: true`. */
  pausedAt?: number
  /** The instance sending its deliveries, until when (a lease): one sender per endpoint, in order. */
  sendingBy?: string
  sendingUntil?: number
}

/** One delivery of one event to one endpoint (`<eventId>.<endpointId>`): its body and state. */
export interface WebhookDeliveryRow extends Row {
  eventId: string
  endpointId: string
  /** Where the event happened. */
  organizationId: string
  eventType: string
  /** Its number in the endpoint's order, from 1; 0 until the endpoint's sender numbers it (before its first try). */
  sequence: number
  /** The body, exactly as signed on every try (its `sequence` written in when it is numbered). */
  body: string
  state: 'pending' | 'delivered' | 'failed' | 'paused'
  attempts: number
  /** The retry window runs from here (a redelivery or a resume restarts it). @default createdAt */
  retryFrom?: number
  lastStatus?: number
  lastError?: string
  deliveredAt?: number
  /** The last request sent, as sent (the body is `body`): what the operator's page shows. */
  lastRequest?: { url: string; headers: Record<string, string>; sentAt: number }
  /**
   * The endpoint's id while the delivery waits (`pending` or `paused`), absent once it is settled
   * (`delivered`, `failed`): the endpoint's queue is an indexed read of what waits, never of its
   * whole history (migration 0014_webhook_delivery_queue).
   */
  waitingFor?: string
  /**
   * `waitingFor`, a space and `organizationId` while the delivery waits (`DERIVED`, never set by a
   * writer): with `queueKey`, an index (migration 0027_webhook_waiting_sources) by which a full
   * backlog counts what one source organization has waiting on the endpoint and finds its oldest
   * (webhooks/capBacklog.ts).
   */
  waitingFrom?: string
  /**
   * Where it stands in its endpoint's queue: `a` and its sequence number (12 digits) once
   * numbered, else `b` and its listKey (after every number): with `waitingFor`, an index the
   * sender reads the head of the queue and the oldest unnumbered deliveries by, a page at a time.
   */
  queueKey: string
  /**
   * Where it sorts in its endpoint's listing: the time it was recorded (15 digits) then a new
   * id's hex (digits and lower-case letters only: every collation orders it alike), so
   * `latchkey_list_webhook_deliveries` and the retention job read pages by the index on
   * (endpointId, listKey) (migration 0014_webhook_delivery_queue).
   */
  listKey: string
}
/**
 * One event as recorded in the transaction of what happened (`<eventId>`), before it is fanned
 * out: the fan-out (webhooks/deliver.ts `fanOut`) numbers it for each of `endpointIds` as a
 * delivery row, in the order events committed, and deletes it.
 */
export interface WebhookEventRow extends Row {
  /** Where it happened. */
  organizationId: string
  eventType: string
  /** The event's `data`, as its body will carry it. */
  data: unknown
  /** The endpoints that wanted it when its transaction read them (its organization's and its parent's). */
  endpointIds: string[]
  /** `yes` while it waits to be fanned out (with `listKey`, the index the fan-out reads by). */
  waiting: 'yes'
  /** When it was recorded (15 digits), then a new id's hex: the order the fan-out takes it in. */
  listKey: string
}
// ---- wing: import and pregeneration (issue 40) ----
/** One user imported by external id (`latchkey_import_user`); its id is derived from the parent and the external id. */
export interface ImportedUserRow extends Row {
  /** The parent organization that imported the user. */
  organizationId: string
  externalId: string
  subOrganizationId: string
  userId: string
  walletIds: string[]
  privateKeyIds: string[]
}

/**
 * A contact, OAuth identity or passkey that one account of a parent holds (kernel/accountClaims.ts:
 * imports, pregenerations, OAuth links); its id is derived from the parent and the value.
 */
export interface ImportClaimRow extends Row {
  organizationId: string
  kind: 'email' | 'phone' | 'oauth' | 'passkey'
  subOrganizationId: string
  /** Set when an import made the claim. */
  externalId?: string
}

/**
 * A passkey the service has shown in an activity's record (kernel/passkeySightings.ts): its id
 * derived from the credential id, never deleted. A registration of a credential id some other
 * activity showed first is a possible copy (`AuthenticatorRow.unproven`).
 */
export interface PasskeySightingRow extends Row {
  /** The activity whose record showed it last ('' where migration 0025 found it in a passkey row). */
  activityId: string
}

/** An organization's long-lived import key: bulk imports encrypt wallets and keys to its public half. */
export interface ImportKeyRow extends Row {
  organizationId: string
  sealedPrivateKey: string
  /** Uncompressed P-256 public key, hex. */
  publicKey: string
}

/**
 * A bundle encrypted to an organization's import key that an import opened: its id is derived from
 * the parent and the bundle's seal (its HPKE encapsulated key), so a bundle opens once, for one
 * person, also when two imports race (migration 0018_import_spent_bundles).
 */
export interface ImportSpentBundleRow extends Row {
  /** The parent organization whose import key opened it. */
  organizationId: string
  /** The account it was imported into, and under which external id. */
  subOrganizationId: string
  externalId: string
}

export interface Tables {
  service: ServiceRow
  organizations: OrganizationRow
  users: UserRow
  apiKeys: ApiKeyRow
  authenticators: AuthenticatorRow
  /** Where each passkey was first shown (kernel/passkeySightings.ts): migration 0025_passkey_sightings. */
  passkeySightings: PasskeySightingRow
  oauthProviders: OauthProviderRow
  userTags: UserTagRow
  wallets: WalletRow
  walletAccounts: WalletAccountRow
  privateKeys: PrivateKeyRow
  activities: ActivityRow
  votes: VoteRow
  policyEvaluations: PolicyEvaluationRow
  policies: PolicyRow
  proxyConfigs: ProxyConfigRow
  fiatCredentials: FiatCredentialRow
  importTargets: ImportTargetRow
  pluginRows: PluginRow
  // Durable jobs (jobs/).
  jobs: JobRow
  // Master-key rotation.
  keyring: KeyringRow
  // sending
  sendTransactions: SendTransactionRow
  nonces: NonceRow
  sponsors: SponsorRow
  gasUsage: GasUsageRow
  // ---- wing: spending limits (issue 37) ----
  spendingLimits: SpendingLimitRow
  spendingLimitUsage: SpendingLimitUsageRow
  sessionProfiles: SessionProfileRow
  // ---- wing: MFA (issue 38) ----
  mfaPolicies: MfaPolicyRow
  mfaFactors: MfaFactorRow
  mfaRecoveryCodes: MfaRecoveryCodeRow
  mfaChallenges: MfaChallengeRow
  // ---- wing: webhooks (issue 39) ----
  webhookEndpoints: WebhookEndpointRow
  webhookDeliveries: WebhookDeliveryRow
  webhookEvents: WebhookEventRow
  // ---- wing: import and pregeneration (issue 40) ----
  importedUsers: ImportedUserRow
  importClaims: ImportClaimRow
  importKeys: ImportKeyRow
  importSpentBundles: ImportSpentBundleRow
}

export type TableName = keyof Tables

/**
 * The statuses of a send still open (signed and committed, not yet final), in the order a send
 * goes through them: what the worker acts on, what holds an account's nonces in flight, and what
 * the backlog watch counts.
 */
export const OPEN_STATUSES = ['PENDING', 'BROADCASTED'] as const
export type OpenStatus = (typeof OPEN_STATUSES)[number]

/** Which of a user's contacts: the e-mail address or the phone number. */
export type ContactKind = 'email' | 'phone'

/**
 * The user's contact of `kind` if it may receive codes and route logins: proven by a verification
 * token its key redeemed, or set in the parent organization (the operator vouches for it).
 * Rows written before contacts carried the mark count as verified. An e-mail address trimmed and
 * in lower case.
 */
export function verifiedContactOf(user: UserRow, kind: ContactKind): string | undefined {
  if (user[kind === 'email' ? 'userEmailUnverified' : 'userPhoneNumberUnverified']) return undefined
  const value = user[kind === 'email' ? 'userEmail' : 'userPhoneNumber']
  return kind === 'email' ? value?.trim().toLowerCase() : value
}

/** When an API key's lifetime (`expirationSeconds` from creation) runs out, epoch ms; none for a lifelong key. */
export const keyExpiresAt = (key: ApiKeyRow): number | undefined =>
  key.expirationSeconds === undefined ? undefined : key.createdAt + Number(key.expirationSeconds) * 1000

/** True once an API key's lifetime (`expirationSeconds` from creation) has run out. */
export const isExpired = (key: ApiKeyRow, now: number) =>
  (keyExpiresAt(key) ?? Number.POSITIVE_INFINITY) <= now

const onChain = (caip2: string, value: string) => `${caip2} ${value.toLowerCase()}`
const whileOpen =
  (key: (row: SendTransactionRow) => string) =>
  (row: SendTransactionRow): string | undefined =>
    (OPEN_STATUSES as readonly string[]).includes(row.status) ? key(row) : undefined

/** A waiting delivery's `waitingFrom`: its endpoint and its source organization. */
export const waitingFromOf = (endpointId: string, organizationId: string) => `${endpointId} ${organizationId}`

/**
 * Indexed fields the store computes from a row as it writes it (`Queries.rowValues`), whatever
 * the writer put in them: a column only, kept right by every write of the row.
 */
export const DERIVED: {
  [T in TableName]?: Partial<Record<keyof Tables[T] & string, (row: Tables[T]) => string | undefined>>
} = {
  jobs: {
    pendingKind: (row) => (row.state === 'pending' ? row.kind : undefined),
  },
  pluginRows: {
    staleAt: (row) => (row.staleAt === undefined ? undefined : staleAtKey(row.staleAt)),
  },
  apiKeys: {
    registeredKey: (row) =>
      isRegisteredKey(row) ? registeredKeyOf(row.publicKey, !row.unproven) : undefined,
  },
  users: {
    verifiedEmail: (row) => verifiedContactOf(row, 'email'),
    verifiedPhone: (row) => verifiedContactOf(row, 'phone'),
  },
  webhookDeliveries: {
    waitingFrom: (row) =>
      row.waitingFor === undefined ? undefined : waitingFromOf(row.waitingFor, row.organizationId),
  },
  sendTransactions: {
    openIn: whileOpen((row) => row.organizationId),
    openHash: whileOpen((row) => onChain(row.caip2, row.txHash)),
    openAccount: whileOpen((row) => onChain(row.caip2, row.account)),
  },
}

/** Fields with a lookup index, per table: `store.findBy(table, field, value)` uses them. */
export const INDEXES: { [T in TableName]: (keyof Tables[T] & string)[] } = {
  service: [],
  // name: migration 0019_account_lookups (list_suborgs's NAME filter).
  organizations: ['parentOrganizationId', 'name'],
  // userEmail, userPhoneNumber: migration 0011_import_contacts (issue 40); userName: 0019_account_lookups;
  // verifiedEmail, verifiedPhone (DERIVED): 0021_verified_contacts.
  users: ['organizationId', 'userEmail', 'userPhoneNumber', 'userName', 'verifiedEmail', 'verifiedPhone'],
  // keyInOrganization: migration 0016_api_key_lookup; registeredKey (DERIVED): 0026_registered_keys, an index on (registeredKey, id);
  // sessionProfileId: 0028_session_profile_keys.
  apiKeys: [
    'publicKey',
    'userId',
    'organizationId',
    'keyInOrganization',
    'registeredKey',
    'sessionProfileId',
  ],
  // publicKeyHex: migration 0019_account_lookups (list_suborgs's PUBLIC_KEY filter).
  authenticators: ['credentialId', 'userId', 'organizationId', 'publicKeyHex'],
  passkeySightings: [],
  oauthProviders: ['userId', 'subject', 'organizationId'],
  userTags: ['organizationId'],
  wallets: ['organizationId'],
  walletAccounts: ['walletId', 'address', 'organizationId'],
  privateKeys: ['organizationId'],
  activities: ['organizationId', 'fingerprint'],
  votes: ['activityId'],
  policyEvaluations: ['activityId'],
  policies: ['organizationId'],
  proxyConfigs: ['organizationId'],
  fiatCredentials: ['organizationId'],
  importTargets: ['userId'],
  // staleAt (DERIVED): migration 0022_plugin_row_sweeps, an index on (kind, staleAt).
  pluginRows: ['kind', 'staleAt'],
  // Durable jobs (jobs/). pendingKind (DERIVED): migration 0023_pending_jobs_by_kind, an index on
  // (pendingKind, runAfter).
  jobs: ['kind', 'state', 'runAfter', 'attempts', 'claimedBy', 'claimedUntil', 'pendingKind'],
  // Master-key rotation.
  keyring: [],
  // sending
  // openIn, openHash, openAccount (DERIVED): migration 0020_open_sends.
  sendTransactions: ['organizationId', 'status', 'openIn', 'openHash', 'openAccount'],
  nonces: [],
  sponsors: [],
  gasUsage: ['userDay', 'organizationMonth'],
  // ---- wing: spending limits (issue 37) ----
  spendingLimits: ['organizationId'],
  spendingLimitUsage: ['organizationId'],
  sessionProfiles: ['organizationId'],
  // ---- wing: MFA (issue 38) ----
  mfaPolicies: ['organizationId', 'userId'],
  mfaFactors: ['userId'],
  mfaRecoveryCodes: ['userId', 'hash'],
  mfaChallenges: [],
  // ---- wing: webhooks (issue 39) ----
  webhookEndpoints: ['organizationId'],
  // waitingFor, queueKey, listKey: migration 0014_webhook_delivery_queue; waitingFrom (DERIVED):
  // 0027_webhook_waiting_sources, an index on (waitingFrom, queueKey).
  webhookDeliveries: ['eventId', 'endpointId', 'state', 'waitingFor', 'queueKey', 'listKey', 'waitingFrom'],
  // waiting, listKey: migration 0015_webhook_events.
  webhookEvents: ['waiting', 'listKey'],
  // ---- wing: import and pregeneration (issue 40) ----
  importedUsers: ['organizationId'],
  importClaims: [],
  importKeys: [],
  importSpentBundles: [],
}
