import {
  decodeJwtClaims,
  namesOAuthIdentity,
  oauthIdentityOf,
  PAGINATION,
  type PaginationOptions,
  SUBORG_FILTER_TYPES,
} from '@latchkey/protocol'
import { findPolicy } from '../activities/updatePolicy.ts'
import { findPrivateKey, renderPrivateKey } from '../domain/privateKeys.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { FieldError, NotFoundError } from '../kernel/base/errors.ts'
import { addressSpellings } from '../kernel/crypto/addresses.ts'
import { defineQuery, type QueryHandler } from '../kernel/registry.ts'
import type { ApiKeyRow, Tables } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { shownTo } from '../pipeline/executeActivity.ts'
import { passkeysSigningInFrom } from '../pipeline/passkeySignIn.ts'
import { renderActivity } from '../pipeline/renderActivity.ts'
import { onlyKeyHoldersUnder, type PageReads, registeredHoldersUnder } from '../pipeline/walletKeys.ts'
import { renderPolicy } from '../policies/renderPolicy.ts'
import { paginate, readPagination } from './paginate.ts'
import {
  renderApiKey,
  renderAuthenticator,
  renderPolicyEvaluation,
  renderUser,
  renderUsers,
  renderUserTag,
  renderWallet,
  renderWalletAccount,
} from './render.ts'

const id = (r: import('../kernel/Reader.ts').Reader, name: string) => r.string(name, { max: 200 })

/** What each table's rows are called in a 404: its code, its id's field, its noun. */
const NOT_FOUND = {
  activities: ['ACTIVITY_NOT_FOUND', 'activityId', 'activity'],
  authenticators: ['AUTHENTICATOR_NOT_FOUND', 'authenticatorId', 'authenticator'],
  users: ['USER_NOT_FOUND', 'userId', 'user'],
  wallets: ['WALLET_NOT_FOUND', 'walletId', 'wallet'],
} as const

/** `table`'s row `rowId` when it is `organizationId`'s; else a 404 (another organization's row is not found either). */
async function ownRow<T extends keyof typeof NOT_FOUND>(
  reads: Reads,
  organizationId: string,
  table: T,
  rowId: string,
): Promise<Tables[T]> {
  const row = await reads.get(table, rowId)
  if (row && row.organizationId === organizationId) return row
  const [code, field, noun] = NOT_FOUND[table]
  throw new NotFoundError({ code, field, message: `${noun} ${rowId} not found` })
}

/**
 * The organizations holding a record that matches `list_suborgs`'s filter, read through the
 * index on the value (an organization's name, a user's name or verified contact, an API key's or
 * passkey's public key, a credential id, an OAuth identity, an account's address): a few reads
 * whatever the number of accounts, for anyone's `/v1/account`, login and sign-up. Every parent's
 * organizations (but for keys and passkeys, those `parentId`'s sign-ins may land in); the caller
 * keeps its own sub-organizations.
 */
async function holdersOf(
  reads: Reads,
  store: PageReads,
  { filterType, value }: { filterType: string; value: string },
  parentId: string,
): Promise<string[]> {
  const owners = <R extends { organizationId: string }>(rows: R[], keep: (row: R) => boolean = () => true) =>
    rows.filter(keep).map((row) => row.organizationId)
  switch (filterType) {
    case 'NAME':
      return (await reads.findBy('organizations', 'name', value)).map((org) => org.id)
    case 'USERNAME':
      return owners(await reads.findBy('users', 'userName', value))
    // Accounts are found by verified contacts only (the proxy's login and sign-up lookups).
    case 'EMAIL':
    case 'PHONE_NUMBER': {
      const kind = filterType === 'EMAIL' ? 'email' : 'phone'
      const contact = kind === 'email' ? value.trim().toLowerCase() : value.trim()
      // Through the index of verified contacts (normalised as `verifiedContactOf` makes them):
      // unverified copies of the address, which anyone may set in their own account, are not read.
      const field = kind === 'email' ? 'verifiedEmail' : 'verifiedPhone'
      return owners(await reads.findBy('users', field, contact))
    }
    // A passkey someone else registered finds no account its sign-in from the parent would not
    // land in (pipeline/passkeySignIn.ts): a client stamping naming the account found would prove
    // the copy and sign in there.
    case 'CREDENTIAL_ID':
      return owners(
        await passkeysSigningInFrom(
          reads,
          await reads.findBy('authenticators', 'credentialId', value.replace(/=+$/, '')),
          parentId,
        ),
      )
    case 'PUBLIC_KEY': {
      const key = value.toLowerCase().replace(/^0x/, '')
      // A key someone else registered finds no account it does not sign in to (pipeline/walletKeys.ts):
      // the proven holders under the parent, and the accounts only the key gets into, read through
      // the index of registered keys a bounded number of rows (not every copy anyone registered,
      // each once judged by reading every user of its account).
      const apiKeys: ApiKeyRow[] = []
      for await (const row of registeredHoldersUnder(store, key, parentId, true)) apiKeys.push(row)
      for await (const row of onlyKeyHoldersUnder(store, key, parentId)) apiKeys.push(row)
      const passkeys = await passkeysSigningInFrom(
        reads,
        await reads.findBy('authenticators', 'publicKeyHex', key),
        parentId,
      )
      return [...owners(apiKeys), ...owners(passkeys)]
    }
    case 'WALLET_ACCOUNT_ADDRESS': {
      // Addresses match case-insensitively: stored as derived (EIP-55 for EVM, lower-case hex or
      // bech32 for others), looked up as sent, lower-cased and, for a 20-byte hex one, checksummed.
      const lower = value.toLowerCase()
      const found = await mapInOrder([...new Set([...addressSpellings(value), lower])], (spelling) =>
        reads.findBy('walletAccounts', 'address', spelling),
      )
      return owners(found.flat(), (account) => account.address.toLowerCase() === lower)
    }
    case 'OIDC_TOKEN': {
      let claims: { iss?: unknown; sub?: unknown; idp_iss?: unknown }
      try {
        claims = decodeJwtClaims(value)
      } catch {
        throw new FieldError({ field: 'filterValue', reason: 'must be an OIDC token (JWT)' })
      }
      // The provider's issuer (a service token's idp_iss) and subject, as recorded.
      const identity = oauthIdentityOf(claims)
      if (identity === undefined) return []
      return owners(await reads.findBy('oauthProviders', 'subject', identity.subject), (provider) =>
        namesOAuthIdentity(provider, identity),
      )
    }
    default:
      return []
  }
}

/**
 * The sub-organizations of `parentId` among `organizationIds`, one page of them in id order (as
 * `paginate` would pick from them all): each candidate's organization is read only until the page
 * is full.
 */
async function subOrganizationsPage(
  reads: Reads,
  parentId: string,
  organizationIds: string[],
  options: PaginationOptions,
): Promise<string[]> {
  const limit = Number(options.limit ?? PAGINATION.defaultLimit)
  let candidates = [...new Set(organizationIds)].sort()
  if (options.after !== undefined) candidates = candidates.filter((id) => id > options.after!)
  if (options.before !== undefined) candidates = candidates.filter((id) => id < options.before!).reverse()
  const page: string[] = []
  for (const id of candidates) {
    if (page.length >= limit) break
    if ((await reads.get('organizations', id))?.parentOrganizationId === parentId) page.push(id)
  }
  return options.before !== undefined ? page.reverse() : page
}

/** Every query of the protocol's `QueryMap` but the sending wing's (`get_send_transaction_status`, `get_nonces`): the seed's and this service's extensions. */
export const builtinQueries: Record<string, QueryHandler> = {
  list_suborgs: defineQuery('list_suborgs', {
    parse: (r) => {
      const filterType = r.optEnum('filterType', SUBORG_FILTER_TYPES)
      const filterValue =
        filterType !== undefined ? r.string('filterValue', { max: 16 * 1024 }) : r.optString('filterValue')
      return { filterType, filterValue, pagination: readPagination(r) }
    },
    run: async ({ store, runtime, organization }, q) => {
      if (q.filterType !== undefined)
        return {
          organizationIds: await subOrganizationsPage(
            store,
            organization.id,
            await holdersOf(
              store,
              runtime.store,
              { filterType: q.filterType, value: q.filterValue! },
              organization.id,
            ),
            q.pagination,
          ),
        }
      const subOrganizations = await store.findBy('organizations', 'parentOrganizationId', organization.id)
      return {
        organizationIds: paginate(subOrganizations, (org) => org.id, q.pagination).map((org) => org.id),
      }
    },
  }),
  get_authenticator: defineQuery('get_authenticator', {
    parse: (r) => ({ authenticatorId: id(r, 'authenticatorId') }),
    run: async ({ store, organization }, q) => {
      const row = await ownRow(store, organization.id, 'authenticators', q.authenticatorId)
      return { authenticator: renderAuthenticator(row) }
    },
  }),
  get_policy_evaluations: defineQuery('get_policy_evaluations', {
    parse: (r) => ({ activityId: id(r, 'activityId') }),
    run: async ({ store, organization }, q) => {
      const activity = await ownRow(store, organization.id, 'activities', q.activityId)
      return {
        policyEvaluations: (await store.findBy('policyEvaluations', 'activityId', activity.id)).map(
          renderPolicyEvaluation,
        ),
      }
    },
  }),
  list_users: defineQuery('list_users', {
    parse: () => ({}),
    run: async ({ store, organization }) => ({
      users: await renderUsers(
        store,
        organization.id,
        await store.findBy('users', 'organizationId', organization.id),
      ),
    }),
  }),
  whoami: defineQuery('whoami', {
    parse: () => ({}),
    run: async ({ store, caller }) => {
      const user = (await store.get('users', caller.userId))!
      const organization = (await store.get('organizations', caller.organizationId))!
      return {
        organizationId: organization.id,
        organizationName: organization.name,
        userId: user.id,
        username: user.userName,
      }
    },
  }),
  get_user: defineQuery('get_user', {
    parse: (r) => ({ userId: id(r, 'userId') }),
    run: async ({ store, organization }, q) => {
      const user = await ownRow(store, organization.id, 'users', q.userId)
      return { user: await renderUser(store, user) }
    },
  }),
  get_wallet: defineQuery('get_wallet', {
    parse: (r) => ({ walletId: id(r, 'walletId') }),
    run: async ({ store, organization }, q) => {
      const wallet = await ownRow(store, organization.id, 'wallets', q.walletId)
      return { wallet: renderWallet(wallet) }
    },
  }),
  list_wallets: defineQuery('list_wallets', {
    parse: () => ({}),
    run: async ({ store, organization }) => ({
      wallets: (await store.findBy('wallets', 'organizationId', organization.id)).map(renderWallet),
    }),
  }),
  list_wallet_accounts: defineQuery('list_wallet_accounts', {
    parse: (r) => ({
      walletId: r.optString('walletId', { max: 200 }),
      // The published clients group accounts into wallets by each account's `walletDetails`.
      includeWalletDetails: r.optBool('includeWalletDetails') ?? false,
      pagination: readPagination(r),
    }),
    run: async ({ store, organization }, q) => {
      let accounts = await store.findBy('walletAccounts', 'organizationId', organization.id)
      if (q.walletId !== undefined) {
        const wallet = await ownRow(store, organization.id, 'wallets', q.walletId)
        accounts = await store.findBy('walletAccounts', 'walletId', wallet.id)
      }
      const page = paginate(accounts, (account) => account.id, q.pagination)
      if (!q.includeWalletDetails) return { accounts: page.map(renderWalletAccount) }
      return {
        accounts: await mapInOrder(page, async (account) => {
          const wallet = await store.get('wallets', account.walletId)
          return {
            ...renderWalletAccount(account),
            ...(wallet ? { walletDetails: renderWallet(wallet) } : {}),
          }
        }),
      }
    },
  }),
  get_activity: defineQuery('get_activity', {
    parse: (r) => ({ activityId: id(r, 'activityId') }),
    run: async ({ store, runtime, registry, organization, caller }, q) => {
      const activity = await ownRow(store, organization.id, 'activities', q.activityId)
      // What its handler shows once is not in the record (records written before it was included).
      const shown = await shownTo({ runtime, registry, reads: store }, activity, caller, { stored: true })
      return { activity: await renderActivity(store, shown, { viewer: caller, now: runtime.now() }) }
    },
  }),
  list_user_tags: defineQuery('list_user_tags', {
    parse: () => ({}),
    run: async ({ store, organization }) => ({
      userTags: (await store.findBy('userTags', 'organizationId', organization.id)).map(renderUserTag),
    }),
  }),
  get_policy: defineQuery('get_policy', {
    parse: (r) => ({ policyId: id(r, 'policyId') }),
    run: async ({ store, organization }, q) => ({
      policy: renderPolicy(await findPolicy(store, organization.id, q.policyId, 'policyId')),
    }),
  }),
  list_policies: defineQuery('list_policies', {
    parse: () => ({}),
    run: async ({ store, organization }) => ({
      policies: (await store.findBy('policies', 'organizationId', organization.id)).map(renderPolicy),
    }),
  }),
  get_api_keys: defineQuery('get_api_keys', {
    parse: (r) => ({ userId: r.optString('userId', { max: 200 }) }),
    run: async ({ store, organization }, q) => {
      if (q.userId !== undefined) {
        const user = await ownRow(store, organization.id, 'users', q.userId)
        return { apiKeys: (await store.findBy('apiKeys', 'userId', user.id)).map(renderApiKey) }
      }
      return { apiKeys: (await store.findBy('apiKeys', 'organizationId', organization.id)).map(renderApiKey) }
    },
  }),
  get_private_key: defineQuery('get_private_key', {
    parse: (r) => ({ privateKeyId: id(r, 'privateKeyId') }),
    run: async ({ store, organization }, q) => ({
      privateKey: renderPrivateKey(
        await findPrivateKey(store, organization.id, q.privateKeyId, 'privateKeyId'),
      ),
    }),
  }),
  list_private_keys: defineQuery('list_private_keys', {
    parse: () => ({}),
    run: async ({ store, organization }) => ({
      privateKeys: (await store.findBy('privateKeys', 'organizationId', organization.id)).map(
        renderPrivateKey,
      ),
    }),
  }),
}
