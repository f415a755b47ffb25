import { ACTIVITIES, type ActivityParameters, type ActivityPath } from '@latchkey/protocol'

/** The parameter names of every version of `P`'s parameters (a union of versions keeps them all). */
type ParameterOf<P extends ActivityPath> =
  ActivityParameters<P> extends infer T ? (T extends unknown ? keyof T & string : never) : never

/**
 * Where an activity's parameters name what it acts on, as its handler reads them. Each list is in
 * the handler's order of precedence: the first parameter given is the one it reads (V2's
 * `signWiths` before V1's `signWith`); each is a string or a list of strings.
 */
export interface SubjectFields<P extends ActivityPath> {
  /** The accounts (or private keys) it signs with or exports, by address or id. */
  readonly accounts?: readonly ParameterOf<P>[]
  /** The wallets it acts on as a whole (exports, adds accounts to, deletes). */
  readonly wallets?: readonly ParameterOf<P>[]
  /**
   * It acts on every account of those wallets too: exports the mnemonic each account's key derives
   * from, or deletes them. Each account is then judged as `wallet_account` in a scope of its own
   * (`walletAccountsOf`), as exporting or signing with it is.
   */
  readonly everyAccount?: true
}

/**
 * What each activity that touches a wallet, an account or a key acts on: the policies, a session
 * profile's scope and the MFA conditions read `wallet` and `wallet_account` from these parameters
 * and no other. A parameter its handler does not read (a `signWith` added to an
 * `eth_send_transaction`, which signs with `from`) names nothing: the stored intent keeps every
 * field sent, so reading any other would let a caller name a wallet they may use while the handler
 * acts on another. Every path whose resource is `WALLET` or `PRIVATE_KEY` is here (an empty entry:
 * it acts on no existing one); any other path has no `wallet`, whatever its parameters say.
 */
export const POLICY_SUBJECTS: { readonly [P in ActivityPath]?: SubjectFields<P> } = {
  sign_raw_payload: { accounts: ['signWith'] },
  sign_raw_payloads: { accounts: ['signWith'] },
  sign_transaction: { accounts: ['signWith'] },
  eth_send_transaction: { accounts: ['from'] },
  // `parseSolSend`: `signWiths` when given (V2), else `signWith` (V1).
  sol_send_transaction: { accounts: ['signWiths', 'signWith'] },
  // It relays a transaction signed elsewhere: no key of the service signs it.
  eth_send_raw_transaction: {},
  export_wallet_account: { accounts: ['address'] },
  export_private_key: { accounts: ['privateKeyId'] },
  export_wallet: { wallets: ['walletId'], everyAccount: true },
  // It adds accounts and leaves those there as they were: no key of theirs leaves or is destroyed.
  create_wallet_accounts: { wallets: ['walletId'] },
  delete_wallets: { wallets: ['walletIds'], everyAccount: true },
  // They make a new wallet or key: none existing is acted on.
  create_wallet: {},
  init_import_wallet: {},
  import_wallet: {},
  create_private_keys: {},
  init_import_private_key: {},
  import_private_key: {},
}

/** What an activity acts on, read from its intent by `POLICY_SUBJECTS`. */
export interface PolicySubject {
  /** The accounts or keys it signs with or exports, by address or id, as the caller named them. */
  accounts: string[]
  /** The wallets it acts on as a whole, by id. */
  walletIds: string[]
  /** The request field naming `walletIds` (`parameters.walletIds`), when one does. */
  walletsField?: string
  /** It acts on every account of `walletIds` too (`SubjectFields.everyAccount`). */
  everyAccount: boolean
}

/**
 * The first of `fields` given in `intent` (present and not null, as `Reader.has`), as a list of
 * strings: empty when none is, or when it holds something else than strings (the handler's
 * `parse` refuses it; nothing is judged as acted on); with the field's name.
 */
function named(
  intent: Record<string, unknown>,
  fields: readonly string[] | undefined,
): { values: string[]; field?: string } {
  for (const field of fields ?? []) {
    const value = intent[field]
    if (value === undefined || value === null) continue
    if (typeof value === 'string') return { values: [value], field }
    if (Array.isArray(value) && value.every((item): item is string => typeof item === 'string'))
      return { values: [...new Set(value)], field }
    return { values: [] }
  }
  return { values: [] }
}

/** What `path`'s activity with this intent acts on (`POLICY_SUBJECTS`). */
export function policySubjectOf(path: string, intent: Record<string, unknown>): PolicySubject {
  const fields = Object.hasOwn(POLICY_SUBJECTS, path)
    ? (POLICY_SUBJECTS[path as ActivityPath] as SubjectFields<ActivityPath>)
    : undefined
  const wallets = named(intent, fields?.wallets)
  return {
    accounts: named(intent, fields?.accounts).values,
    walletIds: wallets.values,
    ...(wallets.field !== undefined ? { walletsField: `parameters.${wallets.field}` } : {}),
    everyAccount: fields?.everyAccount === true,
  }
}

/** The paths whose resource is a wallet or a key: each must say what it acts on. */
export const SUBJECT_RESOURCES: ReadonlySet<string> = new Set(['WALLET', 'PRIVATE_KEY'])

/** Paths acting on wallets or keys that `POLICY_SUBJECTS` does not cover (none: its test checks). */
export const undeclaredSubjects = (): string[] =>
  Object.entries(ACTIVITIES)
    .filter(
      ([path, { resource }]) => SUBJECT_RESOURCES.has(resource) && !Object.hasOwn(POLICY_SUBJECTS, path),
    )
    .map(([path]) => path)
