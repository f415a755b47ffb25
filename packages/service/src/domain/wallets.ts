import type { AccountSpec } from '@latchkey/protocol'
import { mapInOrder } from '../kernel/base/async.ts'
import { ConflictError, NotFoundError } from '../kernel/base/errors.ts'
import { addressSpellings } from '../kernel/crypto/addresses.ts'
import { deriveAccount, generateMnemonic, type NewWalletResult, seedOf } from '../kernel/crypto/index.ts'
import { formatPath, parsePath } from '../kernel/crypto/path.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import type { WalletAccountRow, WalletRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { withField } from './params.ts'
import { privateKeySigner } from './privateKeys.ts'

/**
 * What makes two accounts of a wallet the same: curve, path and address format, the path as it
 * derives (`m/44h/60'/0'/0/0`, `m/44'/60'/0'/0/0` and `M/0044'/...` are one key), so one key is
 * held at most once per format in a wallet however its path is spelt (each account holding a key
 * is judged by the policies: policies/policySignersOf.ts). Accounts stored before under other
 * spellings stay; a path that does not parse (none is stored) is taken as written.
 */
function accountKey(account: Pick<AccountSpec, 'curve' | 'path' | 'addressFormat'>): string {
  let path = account.path
  try {
    path = formatPath(parsePath(account.path))
  } catch {}
  return `${account.curve}|${path}|${account.addressFormat}`
}

/**
 * Derives `accounts` from a wallet's mnemonic (opened only here) and, with `persist`, stores them
 * with their private keys sealed. Throws ALREADY_EXISTS for an account the wallet already has.
 */
export async function deriveAccounts(
  ctx: ActivityContext,
  wallet: WalletRow,
  accounts: AccountSpec[],
  options: {
    persist: boolean
    field: string
    /** The wallet was created in this transaction. */
    fresh?: boolean
    mnemonic?: string
    /** The accounts, derived and sealed already (a `newWallet` crypto job), in `accounts`' order. */
    derived?: { address: string; publicKey: string; sealedPrivateKey: string }[]
  },
): Promise<string[]> {
  if (accounts.length === 0) return []
  const seed = options.derived
    ? undefined
    : await seedOf(options.mnemonic ?? ctx.runtime.openText(wallet.sealedMnemonic))
  // A wallet made in this transaction has no accounts yet (and reading the index would make a
  // SERIALIZABLE transaction conflict with every concurrent wallet's accounts).
  const existing = options.fresh ? [] : await ctx.tx.findBy('walletAccounts', 'walletId', wallet.id)
  const seen = new Set(existing.map((account) => accountKey(account)))
  const addresses = await mapInOrder(accounts, async (spec, index) => {
    const field = `${options.field}[${index}]`
    const early = options.derived?.[index]
    const derived = early ?? withField(field, () => deriveAccount(seed!, spec))
    if (!options.persist) return derived.address
    const key = accountKey(spec)
    if (seen.has(key))
      throw new ConflictError({
        field,
        message: `wallet ${wallet.id} already has the account ${spec.path} (${spec.addressFormat})`,
      })
    seen.add(key)
    await ctx.tx.put('walletAccounts', {
      id: ctx.newId(),
      organizationId: wallet.organizationId,
      walletId: wallet.id,
      curve: spec.curve,
      pathFormat: spec.pathFormat,
      path: spec.path,
      addressFormat: spec.addressFormat,
      address: derived.address,
      publicKey: derived.publicKey,
      sealedPrivateKey:
        'sealedPrivateKey' in derived ? derived.sealedPrivateKey : ctx.runtime.seal(derived.privateKey),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    if ('privateKey' in derived) derived.privateKey.fill(0)
    return derived.address
  })
  seed?.fill(0)
  return addresses
}

/** Creates a wallet (new or imported mnemonic) in the activity's organization with its accounts. */
export async function createWalletRecords(
  ctx: ActivityContext,
  input: {
    organizationId: string
    walletName: string
    accounts: AccountSpec[]
    mnemonicLength?: number
    mnemonic?: string
    imported?: boolean
    field: string
    /** A new mnemonic and its accounts, made and sealed by a `newWallet` crypto job. */
    sealed?: Exclude<NewWalletResult, { error: string }>
  },
): Promise<{ walletId: string; addresses: string[] }> {
  const sealed = input.mnemonic === undefined ? input.sealed : undefined
  const mnemonic = sealed
    ? undefined
    : (input.mnemonic ??
      withField(input.field.replace(/\.accounts$/, ''), () => generateMnemonic(input.mnemonicLength ?? 12)))
  const wallet = await ctx.tx.put('wallets', {
    id: ctx.newId(),
    organizationId: input.organizationId,
    name: input.walletName,
    sealedMnemonic: sealed ? sealed.sealedMnemonic : ctx.runtime.seal(mnemonic!),
    mnemonicLength: sealed ? sealed.mnemonicLength : mnemonic!.split(/\s+/).length,
    exported: false,
    imported: input.imported ?? false,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  })
  const addresses = await deriveAccounts(ctx, wallet, input.accounts, {
    persist: true,
    fresh: true,
    field: input.field,
    ...(sealed ? { derived: sealed.accounts } : { mnemonic: mnemonic! }),
  })
  return { walletId: wallet.id, addresses }
}

export async function findWallet(
  reads: Reads,
  organizationId: string,
  walletId: string,
  field: string,
): Promise<WalletRow> {
  const wallet = await reads.get('wallets', walletId)
  if (!wallet || wallet.organizationId !== organizationId)
    throw new NotFoundError({
      code: 'WALLET_NOT_FOUND',
      field,
      message: `wallet ${walletId} not found in organization ${organizationId}`,
    })
  return wallet
}

/** The wallet account with `address` in the organization (hex addresses match case-insensitively). */
export async function findAccount(
  reads: Reads,
  organizationId: string,
  address: string,
  field: string,
): Promise<WalletAccountRow> {
  // Each spelling an address is stored in, through the address index: never a read of every
  // account of the organization, which an end user can fill with 100,000 (a signing naming its
  // account in another case once read them all).
  let account: WalletAccountRow | undefined
  for (const spelling of addressSpellings(address)) {
    account = (await reads.findBy('walletAccounts', 'address', spelling)).find(
      (row) => row.organizationId === organizationId,
    )
    if (account) break
  }
  if (!account)
    throw new NotFoundError({
      code: 'WALLET_ACCOUNT_NOT_FOUND',
      field,
      message: `no wallet account with address ${address} in organization ${organizationId}`,
    })
  return account
}

/**
 * What `signWith` names for the signing activities: a wallet account (by address), else a private
 * key of the organization (by id or address).
 */
export async function findSigner(
  reads: Reads,
  organizationId: string,
  signWith: string,
  field: string,
): Promise<WalletAccountRow> {
  try {
    return await findAccount(reads, organizationId, signWith, field)
  } catch (error) {
    const key = await privateKeySigner(reads, organizationId, signWith)
    if (key) return key
    throw error
  }
}

/** Runs `fn` with an account's private key and wipes the key afterwards. */
export function withAccountKey<T>(
  runtime: Runtime,
  account: WalletAccountRow,
  fn: (privateKey: Uint8Array) => T,
): T {
  const privateKey = runtime.open(account.sealedPrivateKey)
  try {
    return fn(privateKey)
  } finally {
    privateKey.fill(0)
  }
}
