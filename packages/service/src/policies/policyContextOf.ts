import { ACTIVITIES, type ActivityPath } from '@latchkey/protocol'
import { mapInOrder } from '../kernel/base/async.ts'
import { MAX_TYPED_DEPTH, PLAIN_INTEGER } from '../kernel/crypto/sign.ts'
import type { PolicyFacts } from '../kernel/registry.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { canonicalPolicyValue } from './canonicalAddress.ts'
import type { PolicyScope, PolicyStruct, PolicyValue } from './evaluateExpression.ts'
import { policyParamsOf } from './policyParamsOf.ts'
import { type PolicySigner, policySignersOf } from './policySignersOf.ts'
import { policySubjectOf } from './policySubject.ts'
import { walletAccountsOf } from './walletAccountsOf.ts'

/** Fields of a decoded transaction that carry integers as decimal strings (wei, gas, lamports ...). */
const TRANSACTION_INT_FIELDS: ReadonlySet<string> = new Set([
  'value',
  'chain_id',
  'nonce',
  'gas',
  'gas_price',
  'max_fee_per_gas',
  'max_priority_fee_per_gas',
  'amount',
])

/**
 * JSON as a policy value: integers become ints (exact), null and non-integers are left out; a
 * decimal string under one of `intFields` becomes an int too.
 */
export function toPolicyValue(json: unknown, intFields?: ReadonlySet<string>): PolicyValue | undefined {
  if (typeof json === 'boolean' || typeof json === 'string' || typeof json === 'bigint') return json
  if (typeof json === 'number') return Number.isInteger(json) ? BigInt(json) : undefined
  if (Array.isArray(json))
    return json
      .map((item) => toPolicyValue(item, intFields))
      .filter((item): item is PolicyValue => item !== undefined)
  if (typeof json === 'object' && json !== null) {
    const struct: Record<string, PolicyValue> = {}
    for (const [key, value] of Object.entries(json)) {
      const converted =
        intFields?.has(key) && typeof value === 'string' && /^\d{1,80}$/.test(value)
          ? BigInt(value)
          : toPolicyValue(value, intFields)
      if (converted !== undefined) struct[key] = converted
    }
    return struct
  }
  return undefined
}

const asInt = (value: unknown): bigint | undefined => {
  try {
    if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value)
    if (typeof value === 'string' && PLAIN_INTEGER.test(value)) return BigInt(value)
  } catch {}
  return undefined
}

type TypedFields = Record<string, { name: string; type: string }[]>

/** An EIP-712 value typed by its declared type: (u)ints become ints, addresses lowercase. */
function typedValue(
  types: TypedFields,
  type: string,
  value: unknown,
  depth: number,
): PolicyValue | undefined {
  // As deep as the signer signs: a field it signs past a shallower bound was left out, and a DENY
  // on it errored and refused nothing.
  if (depth > MAX_TYPED_DEPTH || typeof type !== 'string') return undefined
  if (type.endsWith(']')) {
    if (!Array.isArray(value)) return undefined
    const inner = type.slice(0, type.lastIndexOf('['))
    const items = value.map((item) => typedValue(types, inner, item, depth + 1))
    return items.every((item) => item !== undefined) ? (items as PolicyValue[]) : undefined
  }
  if (/^u?int\d*$/.test(type)) return asInt(value)
  if (type === 'address') return typeof value === 'string' ? value.toLowerCase() : undefined
  // Bytes as the signer reads them: its hex decoder takes either case (`0xA9059CBB…`), and a DENY on
  // `data[0..10] == '0xa9059cbb'` must see the bytes signed, not their spelling.
  if (/^bytes\d*$/.test(type)) return typeof value === 'string' ? value.toLowerCase() : undefined
  // The payload's own types only, each a list of fields (a type named `toString` is none of them:
  // the signer refuses such data with a 400, and the context must not throw first).
  const fields = types && typeof types === 'object' && Object.hasOwn(types, type) ? types[type] : undefined
  if (Array.isArray(fields) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const struct: Record<string, PolicyValue> = {}
    for (const field of fields) {
      if (!field || typeof field !== 'object' || typeof field.name !== 'string') continue
      const converted = typedValue(
        types,
        field.type,
        (value as Record<string, unknown>)[field.name],
        depth + 1,
      )
      if (converted !== undefined) struct[field.name] = converted
    }
    return struct
  }
  return toPolicyValue(value)
}

/** `eth.eip_712` of one EIP-712 payload (`{ types, primaryType, domain, message }` JSON). */
export function eip712Of(payload: string): PolicyStruct | undefined {
  let json: {
    types?: TypedFields
    primaryType?: unknown
    domain?: Record<string, unknown>
    message?: unknown
  }
  try {
    json = JSON.parse(payload)
  } catch {
    return undefined
  }
  if (typeof json !== 'object' || json === null || typeof json.primaryType !== 'string') return undefined
  const types = json.types ?? {}
  const domain = json.domain ?? {}
  const domainStruct: Record<string, PolicyValue> = {}
  const name = domain.name
  const version = domain.version
  const chainId = asInt(domain.chainId)
  const contract = domain.verifyingContract
  if (typeof name === 'string') domainStruct.name = name
  if (typeof version === 'string') domainStruct.version = version
  if (chainId !== undefined) domainStruct.chain_id = chainId
  if (typeof contract === 'string') domainStruct.verifying_contract = contract.toLowerCase()
  if (typeof domain.salt === 'string') domainStruct.salt = domain.salt.toLowerCase()
  const message = typedValue(types, json.primaryType, json.message, 0)
  return { primary_type: json.primaryType, domain: domainStruct, message: message ?? {} }
}

/** `eth.eip_7702_authorization` of one payload (`{ chainId, address, nonce }` JSON). */
export function eip7702Of(payload: string): PolicyStruct | undefined {
  let json: Record<string, unknown>
  try {
    json = JSON.parse(payload)
  } catch {
    return undefined
  }
  const chainId = asInt(json?.chainId)
  const nonce = asInt(json?.nonce)
  if (typeof json?.address !== 'string' || chainId === undefined || nonce === undefined) return undefined
  return { address: json.address.toLowerCase(), chain_id: chainId, nonce }
}

/** An activity as policies see it: its path, type and validated parameters. */
export interface PolicyActivity {
  id: string
  organizationId: string
  path: string
  type: string
  intent: Record<string, unknown>
}

export interface PolicyContextOptions {
  /**
   * Decodes `sign_transaction`'s unsigned transaction into `{ eth: { tx } }` or
   * `{ solana: { tx } }` (snake_case fields, lowercase addresses, amounts as decimal strings);
   * may throw when it does not decode (the keyword is then absent).
   */
  decodeTransaction?: (type: never, unsignedTransaction: string, options: { from?: string }) => unknown
  /**
   * What the activity's `prepare` fixed that policies read (`ActivityHandler.policyFacts`): a
   * send's gas and fees, in each call's `eth.tx`. Absent, those fields are absent.
   */
  facts?: PolicyFacts
}

/** `wallet` as policies read it: the organization's wallet `walletId`, canonical; none when it is not one. */
async function walletScopeOf(
  reads: Reads,
  organizationId: string,
  walletId: string,
): Promise<PolicyValue | undefined> {
  const wallet = await reads.get('wallets', walletId)
  if (!wallet || wallet.organizationId !== organizationId) return undefined
  return canonicalPolicyValue({
    id: wallet.id,
    label: wallet.name,
    exported: wallet.exported,
    imported: wallet.imported,
  })
}

/** One signer, wallet or payload of several that one scope judges the activity by (`policyContextsOf`). */
export interface PolicyFocus {
  /**
   * The key it signs or exports with (`policySignersOf`): `wallet` and `wallet_account` are its
   * first holder's (`policyContextsOf` makes a scope for each of the others).
   */
  signer?: PolicySigner
  payload?: string
  walletId?: string
}

/**
 * The keywords a policy `condition` reads for one activity: `activity` (its `params` as the handler
 * acts on them, without what no reader takes: `policyParamsOf`), and for activities that use a
 * wallet `wallet` and `wallet_account`, of the account or wallet its handler acts on, found from
 * the parameter it reads (`POLICY_SUBJECTS`) as the handler finds it (`policySignersOf`), never by
 * another field of the intent (the accounts of a wallet acted on as a whole are each given their
 * scope by `policyContextsOf`); `eth.tx` / `solana.tx` for `sign_transaction` (`solana.tx` for
 * `sol_send_transaction` too), with `eth.tx.from` the signing key's 0x address however it was
 * named; `eth.eip_712` / `eth.eip_7702_authorization` for `sign_raw_payload` and for one payload
 * of `sign_raw_payloads` with that encoding. `focus` is the one signer, wallet or payload of
 * several this scope judges (`policyContextsOf` makes a scope per payload, per account holding
 * each signing key and per wallet of several `walletIds`; decisions use it). Without one, the first
 * signer named is judged. A keyword the activity does not have is absent, so a policy reading it
 * gets OUTCOME_ERROR unless it tests `activity.kind` first (`&&` short-circuits).
 */
export async function policyContextOf(
  reads: Reads,
  activity: PolicyActivity,
  options: PolicyContextOptions = {},
  focus: PolicyFocus = {},
): Promise<PolicyScope> {
  const definition = ACTIVITIES[activity.path as ActivityPath]
  // Every stored activity went through submit, which knows only registered paths.
  if (!definition) throw new Error(`${activity.path} is not in the activity registry`)
  const { resource, action } = definition
  const params = (toPolicyValue(policyParamsOf(activity.path, activity.intent)) ?? {}) as PolicyStruct
  const scope: Record<string, PolicyValue> = {
    activity: { id: activity.id, type: activity.type, kind: activity.path, resource, action, params },
  }
  const intent = activity.intent
  // What the handler acts on, from the parameters it reads (`POLICY_SUBJECTS`) and no other: the
  // stored intent keeps every field sent, a `signWith` its handler never reads included.
  const subject = policySubjectOf(activity.path, intent)
  const signer =
    focus.signer ??
    (subject.accounts.length > 0
      ? await policySignersOf(reads, activity.organizationId, subject.accounts[0]!)
      : undefined)
  // The wallet an activity acts on as a whole (exports it, adds accounts to it, deletes it), so a
  // DENY on `wallet` holds for it as for signing with it.
  let walletId = focus.walletId ?? (subject.walletIds.length === 1 ? subject.walletIds[0] : undefined)
  const holder = signer?.holders[0]
  if (holder !== undefined) {
    scope.wallet_account = { address: holder.address }
    walletId = holder.walletId
  }
  const wallet =
    walletId !== undefined ? await walletScopeOf(reads, activity.organizationId, walletId) : undefined
  if (wallet) scope.wallet = wallet

  const eth: Record<string, PolicyValue> = {}
  const solana: Record<string, PolicyValue> = {}
  // A Solana send is judged like `sign_transaction` of the transaction the user gave.
  const transactionType = activity.path === 'sol_send_transaction' ? 'TRANSACTION_TYPE_SOLANA' : intent.type
  if (
    (activity.path === 'sign_transaction' || activity.path === 'sol_send_transaction') &&
    options.decodeTransaction &&
    typeof transactionType === 'string' &&
    typeof intent.unsignedTransaction === 'string'
  ) {
    let decoded: { eth?: { tx?: unknown }; solana?: { tx?: unknown } } | undefined
    // `from` is the address the chain sees: the signing key's, whichever of its addresses (or a
    // private key's id) the handler's parameter names, so a DENY on it holds.
    try {
      decoded = options.decodeTransaction(transactionType as never, intent.unsignedTransaction, {
        ...(signer !== undefined ? { from: signer.from } : {}),
      }) as typeof decoded
    } catch {}
    const ethTx = toPolicyValue(decoded?.eth?.tx, TRANSACTION_INT_FIELDS)
    const solanaTx = toPolicyValue(decoded?.solana?.tx, TRANSACTION_INT_FIELDS)
    if (ethTx !== undefined) eth.tx = ethTx
    if (solanaTx !== undefined) solana.tx = solanaTx
  }
  const payloads = Array.isArray(intent.payloads) ? intent.payloads : []
  // The payload judged: `sign_raw_payload`'s, or one of `sign_raw_payloads`' (each judged in a
  // scope of its own by `policyContextsOf`, so a policy on one never lets the others through unread).
  const payload =
    focus.payload ??
    (activity.path === 'sign_raw_payload'
      ? intent.payload
      : activity.path === 'sign_raw_payloads' && payloads.length === 1
        ? payloads[0]
        : undefined)
  if (
    (activity.path === 'sign_raw_payload' || activity.path === 'sign_raw_payloads') &&
    typeof payload === 'string'
  ) {
    const decoded =
      intent.encoding === 'PAYLOAD_ENCODING_EIP712'
        ? eip712Of(payload)
        : intent.encoding === 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION'
          ? eip7702Of(payload)
          : undefined
    if (decoded)
      eth[intent.encoding === 'PAYLOAD_ENCODING_EIP712' ? 'eip_712' : 'eip_7702_authorization'] = decoded
  }
  if (Object.keys(eth).length > 0) scope.eth = eth
  if (Object.keys(solana).length > 0) scope.solana = solana
  // Literals are canonical (parsePolicy): so is every address the activity names, wherever it sits.
  return canonicalPolicyValue(scope) as PolicyScope
}

/**
 * The scopes an activity is judged in: one for each signer it signs or exports with, each account
 * of the organization holding that signer's key (`policySignersOf`: the same key under another
 * address format, or in another wallet, each with its own `wallet`), each
 * wallet it acts on and each payload of `sign_raw_payloads` (and each combination), so
 * `wallet_account`, `wallet` and `eth.eip_712` are there for every one: a DENY on any refuses the
 * whole activity; an ALLOW, a session profile's scope, must hold in all. An activity on every
 * account of its wallets (`export_wallet` exports the mnemonic their keys derive from,
 * `delete_wallets` deletes them: `SubjectFields.everyAccount`) is judged once per account of each,
 * with that account as `wallet_account` (`walletAccountsOf`: one page of the wallet index a wallet,
 * a 403 past `MAX_WALLET_ACCOUNTS`); a wallet of no account once, without `wallet_account`.
 * `eth_send_transaction` is judged once per call in each, with that call as `eth.tx` (`from`, the signing key's 0x address,
 * `to`, `value`, `data`, `chain_id`), so a policy on `eth.tx.to` or `eth.tx.value` sees every call
 * of a batch, sponsored or not. Each call's `eth.tx` also has what the transaction carrying it is
 * signed with (`options.facts`, from `prepare`: its `gas` and the most `max_fee_per_gas` and
 * `max_priority_fee_per_gas` the account may pay, a replacement's included), so a fee the caller
 * sets, or a node's estimate, is judged too.
 */
export async function policyContextsOf(
  reads: Reads,
  activity: PolicyActivity,
  options: PolicyContextOptions = {},
): Promise<PolicyScope[]> {
  const intent = activity.intent
  const subject = policySubjectOf(activity.path, intent)
  const signers = await mapInOrder(subject.accounts, (named) =>
    policySignersOf(reads, activity.organizationId, named),
  )
  const payloads =
    activity.path === 'sign_raw_payloads' && Array.isArray(intent.payloads)
      ? intent.payloads.filter((payload): payload is string => typeof payload === 'string')
      : []
  // The accounts of the wallets it exports or deletes as a whole: each is judged as the account.
  const walletAccounts = subject.everyAccount
    ? await walletAccountsOf(
        reads,
        activity.organizationId,
        subject.walletIds,
        subject.walletsField ?? 'parameters',
      )
    : undefined
  const each = <T>(items: readonly T[]): (T | undefined)[] => (items.length > 1 ? [...items] : [undefined])
  const foci: PolicyFocus[] = (signers.length > 0 ? signers : [undefined]).flatMap((signer) =>
    each(subject.walletIds).flatMap((walletId) =>
      each(payloads).map((payload) => ({
        ...(signer !== undefined ? { signer } : {}),
        ...(walletId !== undefined ? { walletId } : {}),
        ...(payload !== undefined ? { payload } : {}),
      })),
    ),
  )
  // Each focus's scope is built once, with its key's first account; its other accounts differ
  // only in `wallet_account` and `wallet` (canonical already, as the rest of the scope), each
  // wallet read once.
  const wallets = new Map<string, Promise<PolicyValue | undefined>>()
  const walletOf = (walletId: string) => {
    const kept = wallets.get(walletId)
    if (kept) return kept
    const wallet = walletScopeOf(reads, activity.organizationId, walletId)
    wallets.set(walletId, wallet)
    return wallet
  }
  const scopes = (
    await mapInOrder(foci, async (focus) => {
      const scope = await policyContextOf(reads, activity, options, focus)
      const walletId = focus.walletId ?? (subject.walletIds.length === 1 ? subject.walletIds[0] : undefined)
      const accounts = walletId !== undefined ? walletAccounts?.get(walletId) : undefined
      // Every account of the wallet, in this wallet's scope (canonical already). A wallet of none
      // is judged once, without `wallet_account`: it holds no account a policy can name.
      if (accounts !== undefined && accounts.length > 0)
        return accounts.map((address) => ({
          focus,
          scope: { ...scope, wallet_account: { address } } as PolicyScope,
        }))
      const holders = focus.signer?.holders ?? []
      return mapInOrder(holders.length > 0 ? holders : [undefined], async (holder, index) => {
        if (index === 0 || holder === undefined) return { focus, scope }
        const { wallet: _first, ...rest } = scope
        const wallet = await walletOf(holder.walletId)
        return {
          focus,
          scope: {
            ...rest,
            wallet_account: { address: holder.address },
            ...(wallet !== undefined ? { wallet } : {}),
          } as PolicyScope,
        }
      })
    })
  ).flat()
  if (activity.path !== 'eth_send_transaction') return scopes.map(({ scope }) => scope)
  const calls = Array.isArray(intent.calls) ? intent.calls : [intent]
  const chainId = typeof intent.caip2 === 'string' ? intent.caip2.slice('eip155:'.length) : ''
  return scopes.flatMap(({ focus, scope }) => {
    // The sender the chain sees: the key's 0x address, whichever of its addresses `from` named.
    const from = focus.signer?.from ?? (typeof intent.from === 'string' ? intent.from : undefined)
    return calls.map((call) => {
      const { to, value, data } = (call ?? {}) as Record<string, unknown>
      const tx = toPolicyValue(
        {
          ...options.facts?.ethTx,
          ...(from !== undefined ? { from } : {}),
          ...(typeof to === 'string' ? { to } : {}),
          value: typeof value === 'string' ? value : '0',
          // Hex in either case is the same bytes to the signer: the policies read it lower-cased, as
          // `sign_transaction`'s decoded calldata is, so a selector DENY holds for any spelling.
          data: typeof data === 'string' ? data.toLowerCase() : '0x',
          chain_id: chainId,
        },
        TRANSACTION_INT_FIELDS,
      ) as PolicyStruct
      // The rest of the scope is canonical already.
      const eth = { ...((scope.eth as PolicyStruct | undefined) ?? {}), tx: canonicalPolicyValue(tx) }
      return { ...scope, eth } as PolicyScope
    })
  })
}

/** One approval of an activity: the submitter's stamp or a vote. */
export interface Approval {
  userId: string
  /** apiKeyId or authenticatorId that stamped it. */
  credentialId: string
}

/**
 * The keywords a policy `consensus` reads: `approvers` ({ id, tags (user tag ids), email, alias })
 * and `credentials` ({ id, user_id, type, credential_id, public_key }), one per distinct approval.
 */
export async function consensusContextOf(
  reads: Reads,
  organizationId: string,
  approvals: readonly Approval[],
): Promise<{ approvers: PolicyValue[]; credentials: PolicyValue[] }> {
  const tags = await reads.findBy('userTags', 'organizationId', organizationId)
  const approvers: PolicyValue[] = []
  const credentials: PolicyValue[] = []
  const seenUsers = new Set<string>()
  const seenCredentials = new Set<string>()
  for (const approval of approvals) {
    // Each user read once, however many of their credentials approve.
    if (!seenUsers.has(approval.userId)) {
      seenUsers.add(approval.userId)
      const user = await reads.get('users', approval.userId)
      if (user)
        approvers.push({
          id: user.id,
          tags: tags.filter((tag) => tag.userIds.includes(user.id)).map((tag) => tag.id),
          email: user.userEmail ?? '',
          alias: user.userName,
        })
    }
    if (seenCredentials.has(approval.credentialId)) continue
    seenCredentials.add(approval.credentialId)
    const apiKey = await reads.get('apiKeys', approval.credentialId)
    const authenticator = apiKey ? undefined : await reads.get('authenticators', approval.credentialId)
    if (apiKey)
      credentials.push({
        id: apiKey.id,
        user_id: apiKey.userId,
        type: apiKey.credentialType,
        credential_id: apiKey.id,
        public_key: apiKey.publicKey,
      })
    else if (authenticator)
      credentials.push({
        id: authenticator.id,
        user_id: authenticator.userId,
        type: 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR',
        credential_id: authenticator.credentialId,
        public_key: authenticator.publicKeyHex,
      })
  }
  return {
    approvers: approvers.map(canonicalPolicyValue),
    credentials: credentials.map(canonicalPolicyValue),
  }
}
