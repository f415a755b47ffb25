// latchkey_create_spending_limit, latchkey_update_spending_limit, latchkey_delete_spending_limit and
// the query latchkey_list_spending_limits. The activities are decided like any other (root quorum,
// or a policy naming `activity.resource == 'POLICY'` and their action): a non-root caller cannot
// create, raise or remove a limit, even one on themselves, unless a policy lets them.
import type {
  SpendingLimit,
  SpendingLimitAsset,
  SpendingLimitPeriod,
  SpendingLimitScope,
  SpendingLimitWindow,
} from '@latchkey/protocol'
import { base58 } from '@scure/base'
import { findSigner } from '../domain/wallets.ts'
import { FieldError, LimitError, NotFoundError } from '../kernel/base/errors.ts'
import { timestampOf } from '../kernel/base/ids.ts'
import { Reader } from '../kernel/Reader.ts'
import { defineActivity, defineQuery } from '../kernel/registry.ts'
import { orderSpends } from '../kernel/spending.ts'
import type { SpendingLimitRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Reads.ts'
import { PERIOD_MS, usageAt } from './spendGuard.ts'
import { EMPTY_LOG } from './spendLog.ts'
import { normalAddress } from './spendOf.ts'

/** Most limits per organization. */
export const MAX_LIMITS = 100
/** Most destinations per allow-list. */
export const MAX_DESTINATIONS = 100

const PERIODS = Object.keys(PERIOD_MS) as SpendingLimitPeriod[]
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/
const CAIP2 = /^(eip155:[1-9]\d{0,15}|solana:[1-9A-HJ-NP-Za-km-z]{1,32})$/
/** A decimal amount below 2^256 (checked after the pattern). */
const AMOUNT = /^(0|[1-9]\d{0,77})$/

function readScope(r: Reader): SpendingLimitScope {
  const type = r.enum('type', [
    'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT',
    'SPENDING_LIMIT_SCOPE_USER',
    'SPENDING_LIMIT_SCOPE_API_KEY',
    'SPENDING_LIMIT_SCOPE_SESSION_PROFILE',
  ] as const)
  if (type === 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT')
    return { type, address: r.string('address', { max: 200 }) }
  if (type === 'SPENDING_LIMIT_SCOPE_USER') return { type, userId: r.string('userId', { max: 200 }) }
  if (type === 'SPENDING_LIMIT_SCOPE_SESSION_PROFILE')
    return { type, sessionProfileId: r.string('sessionProfileId', { max: 200 }) }
  return { type, apiKeyId: r.string('apiKeyId', { max: 200 }) }
}

function readWindow(r: Reader): SpendingLimitWindow {
  const type = r.enum('type', ['SPENDING_LIMIT_WINDOW_ROLLING', 'SPENDING_LIMIT_WINDOW_FIXED'] as const)
  const period = r.enum('period', PERIODS)
  if (type === 'SPENDING_LIMIT_WINDOW_ROLLING') return { type, period }
  return { type, period, startTimestampMs: r.uintString('startTimestampMs') }
}

function readAsset(r: Reader): SpendingLimitAsset {
  const type = r.enum('type', [
    'SPENDING_LIMIT_ASSET_NATIVE',
    'SPENDING_LIMIT_ASSET_ERC20',
    'SPENDING_LIMIT_ASSET_SPL',
  ] as const)
  const caip2 = r.string('caip2', {
    max: 48,
    pattern: CAIP2,
    hint: 'a CAIP-2 chain id (eip155:<id> or solana:<ref>)',
  })
  if (type === 'SPENDING_LIMIT_ASSET_NATIVE') return { type, caip2 }
  if (type === 'SPENDING_LIMIT_ASSET_SPL') {
    if (!caip2.startsWith('solana:'))
      throw new FieldError({
        field: r.field('caip2'),
        reason: 'must be a Solana cluster (solana:<ref>) for an SPL token',
      })
    const mint = r.string('mint', { max: 44, pattern: SOLANA_ADDRESS, hint: 'a base58 Solana address' })
    if (base58.decode(mint).length !== 32)
      throw new FieldError({ field: r.field('mint'), reason: 'must be a 32-byte base58 Solana address' })
    return { type, caip2, mint }
  }
  if (!caip2.startsWith('eip155:'))
    throw new FieldError({
      field: r.field('caip2'),
      reason: 'must be an EVM chain (eip155:<id>) for an ERC-20 token',
    })
  return {
    type,
    caip2,
    contract: normalAddress(
      r.string('contract', { max: 42, pattern: EVM_ADDRESS, hint: 'a 0x-prefixed 20-byte hex address' }),
    ),
  }
}

function readAmount(r: Reader, name: string): string {
  const amount = r.string(name, {
    max: 78,
    pattern: AMOUNT,
    hint: 'a decimal string of whole units (wei, lamports, token units)',
  })
  if (BigInt(amount) >= 2n ** 256n)
    throw new FieldError({ field: r.field(name), reason: 'must be below 2^256' })
  return amount
}

/** The allow-list, each address checked against the asset's chain family and kept normalised. */
function readDestinations(r: Reader, caip2: string): string[] | undefined {
  const evm = caip2.startsWith('eip155:')
  const list = r.optArray(
    'allowedDestinations',
    (value, field) => {
      if (typeof value !== 'string' || !(evm ? EVM_ADDRESS : SOLANA_ADDRESS).test(value))
        throw new FieldError({
          field,
          reason: `must be ${evm ? 'a 0x-prefixed 20-byte hex address' : 'a base58 Solana address'}`,
        })
      return normalAddress(value)
    },
    { max: MAX_DESTINATIONS },
  )
  return list && [...new Set(list)]
}

const name = (r: Reader) => r.string('spendingLimitName', { max: 100 })

export async function findLimit(reads: Reads, organizationId: string, id: string): Promise<SpendingLimitRow> {
  const limit = await reads.get('spendingLimits', id)
  if (!limit || limit.organizationId !== organizationId)
    throw new NotFoundError({
      code: 'SPENDING_LIMIT_NOT_FOUND',
      field: 'parameters.spendingLimitId',
      message: `spending limit ${id} not found in organization ${organizationId}`,
    })
  return limit
}

/** The scope's user, API key, session profile or wallet account, in the organization (404 naming the field). */
async function checkScope(
  reads: Reads,
  organizationId: string,
  scope: SpendingLimitScope,
): Promise<SpendingLimitScope> {
  if (scope.type === 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT') {
    const account = await findSigner(reads, organizationId, scope.address, 'parameters.scope.address')
    return { ...scope, address: normalAddress(account.address) }
  }
  if (scope.type === 'SPENDING_LIMIT_SCOPE_USER') {
    const user = await reads.get('users', scope.userId)
    if (!user || user.organizationId !== organizationId)
      throw new NotFoundError({
        code: 'USER_NOT_FOUND',
        field: 'parameters.scope.userId',
        message: `user ${scope.userId} not found in organization ${organizationId}`,
      })
    return scope
  }
  if (scope.type === 'SPENDING_LIMIT_SCOPE_SESSION_PROFILE') {
    // The organization's profile, or its parent's (the app's, which its sub-organizations' logins name).
    const profile = await reads.get('sessionProfiles', scope.sessionProfileId)
    const organization = await reads.get('organizations', organizationId)
    if (
      !profile ||
      (profile.organizationId !== organizationId &&
        profile.organizationId !== organization?.parentOrganizationId)
    )
      throw new NotFoundError({
        code: 'SESSION_PROFILE_NOT_FOUND',
        field: 'parameters.scope.sessionProfileId',
        message: `session profile ${scope.sessionProfileId} not found in organization ${organizationId} or its parent`,
      })
    return scope
  }
  const key = await reads.get('apiKeys', scope.apiKeyId)
  if (!key || key.organizationId !== organizationId)
    throw new NotFoundError({
      code: 'API_KEY_NOT_FOUND',
      field: 'parameters.scope.apiKeyId',
      message: `API key ${scope.apiKeyId} not found in organization ${organizationId}`,
    })
  return scope
}

export const createSpendingLimit = defineActivity('latchkey_create_spending_limit', {
  parse: (r) => {
    const asset = readAsset(r.object('asset'))
    const allowedDestinations = readDestinations(r, asset.caip2)
    return {
      spendingLimitName: name(r),
      scope: readScope(r.object('scope')),
      window: readWindow(r.object('window')),
      asset,
      amount: readAmount(r, 'amount'),
      ...(allowedDestinations ? { allowedDestinations } : {}),
    }
  },
  run: async (ctx, p) => {
    // In the order of the organization's spends (held already where the pipeline ordered it: `serializes`).
    await orderSpends(ctx.tx, ctx.organization.id)
    const scope = await checkScope(ctx.tx, ctx.organization.id, p.scope)
    const existing = await ctx.tx.findBy('spendingLimits', 'organizationId', ctx.organization.id)
    if (existing.length >= MAX_LIMITS)
      throw new LimitError({
        message: `organization ${ctx.organization.id} has ${MAX_LIMITS} spending limits, the most it may have`,
        field: 'parameters',
      })
    const id = ctx.newId()
    await ctx.tx.put('spendingLimits', {
      id,
      organizationId: ctx.organization.id,
      name: p.spendingLimitName,
      scope,
      window: p.window,
      asset: p.asset,
      amount: p.amount,
      allowedDestinations: p.allowedDestinations ?? [],
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    await ctx.tx.put('spendingLimitUsage', {
      id,
      organizationId: ctx.organization.id,
      ...EMPTY_LOG,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    return { spendingLimitId: id }
  },
})

export const updateSpendingLimit = defineActivity('latchkey_update_spending_limit', {
  parse: (r) => {
    const amount = r.has('amount') ? readAmount(r, 'amount') : undefined
    const spendingLimitName = r.has('spendingLimitName') ? name(r) : undefined
    // The allow-list's addresses are checked against the limit's chain in `run`.
    const allowedDestinations = r.optArray('allowedDestinations', (value) => value, { max: MAX_DESTINATIONS })
    return {
      spendingLimitId: r.string('spendingLimitId', { max: 200 }),
      ...(amount !== undefined ? { amount } : {}),
      ...(spendingLimitName !== undefined ? { spendingLimitName } : {}),
      ...(allowedDestinations ? { allowedDestinations: allowedDestinations as string[] } : {}),
    }
  },
  // Raising the amount or letting the asset reach an address the list did not: under MFA, held.
  loosensGuard: async (reads, organizationId, p) => {
    const limit = await reads.get('spendingLimits', p.spendingLimitId)
    if (!limit || limit.organizationId !== organizationId) return false
    if (p.amount !== undefined && BigInt(p.amount) > BigInt(limit.amount)) return true
    const before = limit.allowedDestinations ?? []
    // An empty list already lets it go anywhere.
    if (p.allowedDestinations === undefined || before.length === 0) return false
    const after =
      readDestinations(
        new Reader({ allowedDestinations: p.allowedDestinations }, 'parameters'),
        limit.asset.caip2,
      ) ?? []
    return after.length === 0 || after.some((address) => !before.includes(address))
  },
  run: async (ctx, p) => {
    await orderSpends(ctx.tx, ctx.organization.id)
    const limit = await findLimit(ctx.tx, ctx.organization.id, p.spendingLimitId)
    const allowedDestinations =
      p.allowedDestinations === undefined
        ? limit.allowedDestinations
        : (readDestinations(
            new Reader({ allowedDestinations: p.allowedDestinations }, 'parameters'),
            limit.asset.caip2,
          ) ?? [])
    await ctx.tx.put('spendingLimits', {
      ...limit,
      name: p.spendingLimitName ?? limit.name,
      amount: p.amount ?? limit.amount,
      allowedDestinations,
      updatedAt: ctx.now,
    })
    return { spendingLimitId: limit.id }
  },
})

export const deleteSpendingLimit = defineActivity('latchkey_delete_spending_limit', {
  parse: (r) => ({ spendingLimitId: r.string('spendingLimitId', { max: 200 }) }),
  // Removing a limit that still covers someone (not an agent's whose key is gone): under MFA, held.
  loosensGuard: async (reads, organizationId, p) => {
    const limit = await reads.get('spendingLimits', p.spendingLimitId)
    if (!limit || limit.organizationId !== organizationId) return false
    return checkScope(reads, organizationId, limit.scope).then(
      () => true,
      (error: unknown) => (error instanceof NotFoundError ? false : Promise.reject(error)),
    )
  },
  run: async (ctx, p) => {
    await orderSpends(ctx.tx, ctx.organization.id)
    const limit = await findLimit(ctx.tx, ctx.organization.id, p.spendingLimitId)
    await ctx.tx.delete('spendingLimits', limit.id)
    await ctx.tx.delete('spendingLimitUsage', limit.id)
    return { spendingLimitId: limit.id }
  },
})

/** A limit on the wire, with its window's use at `now`. */
export function renderLimit(
  limit: SpendingLimitRow,
  usage: Parameters<typeof usageAt>[1],
  now: number,
): SpendingLimit {
  const state = usageAt(limit, usage, now)
  const cap = BigInt(limit.amount)
  const next =
    state.window.end ?? (state.entries[0] ? state.entries[0].at + PERIOD_MS[limit.window.period] : undefined)
  return {
    spendingLimitId: limit.id,
    spendingLimitName: limit.name,
    scope: limit.scope,
    window: limit.window,
    asset: limit.asset,
    amount: limit.amount,
    allowedDestinations: limit.allowedDestinations,
    used: state.used.toString(),
    remaining: (cap > state.used ? cap - state.used : 0n).toString(),
    ...(state.used > 0n && next !== undefined ? { nextReleaseTimestampMs: String(next) } : {}),
    createdAt: timestampOf(limit.createdAt),
    updatedAt: timestampOf(limit.updatedAt),
  }
}

export const listSpendingLimits = defineQuery('latchkey_list_spending_limits', {
  parse: () => ({}),
  run: async ({ store, organization, now }) => {
    const limits = await store.findBy('spendingLimits', 'organizationId', organization.id)
    const spendingLimits: SpendingLimit[] = []
    for (const limit of limits.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id)))
      spendingLimits.push(renderLimit(limit, await store.get('spendingLimitUsage', limit.id), now))
    return { spendingLimits }
  },
})
