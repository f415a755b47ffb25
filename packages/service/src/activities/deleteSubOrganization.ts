import { releaseAll, valuesOfAccount } from '../domain/claimedValues.ts'
import { ConflictError, PermissionError } from '../kernel/base/errors.ts'
import { defineActivity } from '../kernel/registry.ts'
import type { TableName } from '../kernel/store/model.ts'

/** Tables whose rows belong to one organization (its activity history is kept). */
const OWNED: TableName[] = [
  'users',
  'apiKeys',
  'authenticators',
  'oauthProviders',
  'userTags',
  'walletAccounts',
  'wallets',
  'privateKeys',
  'policies',
  'fiatCredentials',
]

/**
 * Deletes the sub-organization the activity is submitted in, with its users, credentials,
 * sessions (their keys), OAuth links, wallets, private keys and policies, and what the wings keep
 * of it (`ServicePlugin.forget`: its users' second factors, its spending limits and session
 * profiles, its webhook endpoints), its users' pending import targets; its activities stay as the
 * record.
 * Only its root quorum may (no `allowNonRoot`, and the parent's proxy user cannot act here), a
 * top-level organization cannot be deleted, and wallets or private keys never exported need
 * `deleteWithoutExport`, as for `delete_wallets`. The claims its contacts, OAuth identities and
 * passkeys held under the parent (kernel/accountClaims.ts) are released with it: an import or a
 * sign-up of the same values finds them free once the deletion commits.
 */
export const deleteSubOrganization = defineActivity('delete_sub_organization', {
  parse: (r) => {
    const deleteWithoutExport = r.optBool('deleteWithoutExport')
    return deleteWithoutExport !== undefined ? { deleteWithoutExport } : {}
  },
  run: async (ctx, p) => {
    const organization = ctx.organization
    if (organization.parentOrganizationId === undefined)
      throw new PermissionError({
        field: 'organizationId',
        message: 'only a sub-organization can be deleted; submit this in the sub-organization',
      })
    if (!p.deleteWithoutExport) {
      const unexported =
        (await ctx.tx.findBy('wallets', 'organizationId', organization.id)).find((w) => !w.exported) ??
        (await ctx.tx.findBy('privateKeys', 'organizationId', organization.id)).find((k) => !k.exported)
      if (unexported)
        throw new ConflictError({
          code: 'WALLET_NOT_EXPORTED',
          field: 'parameters.deleteWithoutExport',
          message: `${'sealedMnemonic' in unexported ? 'wallet' : 'private key'} ${unexported.id} was never exported; export it first or set deleteWithoutExport`,
        })
    }
    const claimed = await valuesOfAccount(ctx.tx, organization.id)
    const userIds = (await ctx.tx.findBy('users', 'organizationId', organization.id)).map((user) => user.id)
    for (const plugin of ctx.registry.plugins)
      await plugin.forget?.(ctx.tx, { userIds, organizationId: organization.id }, ctx.runtime)
    for (const table of OWNED)
      for (const row of await ctx.tx.findBy(table, 'organizationId' as never, organization.id as never))
        await ctx.tx.delete(table, row.id)
    // Pending imports' target keys (`init_import_wallet`) of every user, root or not.
    for (const user of new Set([...userIds, ...organization.rootUserIds]))
      for (const target of await ctx.tx.findBy('importTargets', 'userId', user))
        await ctx.tx.delete('importTargets', target.id)
    await ctx.tx.delete('organizations', organization.id)
    await releaseAll(ctx.tx, organization, claimed)
    return { subOrganizationUuid: organization.id }
  },
})
