import type { ActivityParameters, RootUserParams } from '@latchkey/protocol'
import { readRootUser, readWalletParams } from '../domain/params.ts'
import { addNewUserCredentials } from '../domain/users.ts'
import {
  accountsHoldingContact,
  callerVouchesForContacts,
  holdsVerifiedContact,
  newUserContacts,
} from '../domain/verifiedContact.ts'
import { createWalletRecords } from '../domain/wallets.ts'
import { claimForAccount } from '../kernel/accountClaims.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { ConflictError, FieldError, PermissionError } from '../kernel/base/errors.ts'
import type { Reader } from '../kernel/Reader.ts'
import { type ActivityContext, defineActivity, type SubOrganizationHookContext } from '../kernel/registry.ts'
import type { UserRow } from '../kernel/store/model.ts'

/** Most root users one sub-organization may start with. */
export const MAX_ROOT_USERS = 20

/** Reads a root quorum's threshold (`name`): at least 1, at most the number of root users. */
export function readQuorumThreshold(r: Reader, name: string, rootUsers: number): number {
  const threshold = r.int(name, { min: 1 })
  if (threshold > rootUsers)
    throw new FieldError({
      code: 'QUORUM_INVALID',
      field: `parameters.${name}`,
      reason: `(${threshold}) must be at most the number of root users (${rootUsers})`,
    })
  return threshold
}

/**
 * A sub-organization of the caller's organization with its root users (API keys, passkeys, and
 * through the sign-in plugin OAuth providers and a verification token) and optionally a wallet.
 * V8 takes OAuth providers as `oidcClaims` too: the parent organization (the app's back end)
 * vouches for the identity; the auth proxy's user, acting for a browser, may not.
 */
export const createSubOrganization = defineActivity('create_sub_organization', {
  // The auth proxy's user (not a root user) creates sub-organizations at sign-up.
  allowNonRoot: true,
  // A sign-up's verification token and OIDC tokens are no reader's to take from its record (`bearerParameters`).
  bearerParameters: ['verificationToken', 'clientSignature', 'rootUsers[].oauthProviders[].oidcToken'],
  // Its record shows the passkeys it registers (kernel/passkeySightings.ts).
  passkeyParameters: ['rootUsers[].authenticators[]'],
  parse: (r, type) => {
    const version = { type, oidcClaims: type === 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8' }
    const rootUsers = r.array('rootUsers', (value, field) => readRootUser(value, field, version), {
      min: 1,
      max: MAX_ROOT_USERS,
    })
    const rootQuorumThreshold = readQuorumThreshold(r, 'rootQuorumThreshold', rootUsers.length)
    const wallet = r.optObject('wallet')
    const flags = [
      'disableEmailRecovery',
      'disableEmailAuth',
      'disableSmsAuth',
      'disableOtpEmailAuth',
    ] as const
    const verificationToken = r.optString('verificationToken', { max: 8192 })
    // Proof of the key the token is bound to, as submitted: the sign-in plugin's hook reads and
    // checks it (a value of another shape is refused there, naming the field).
    const clientSignature = r.has('clientSignature')
      ? (r.value.clientSignature as ActivityParameters<'create_sub_organization'>['clientSignature'])
      : undefined
    return {
      subOrganizationName: r.string('subOrganizationName', { max: 256 }),
      rootUsers,
      rootQuorumThreshold,
      ...(wallet ? { wallet: readWalletParams(wallet) } : {}),
      ...Object.fromEntries(flags.filter((flag) => r.has(flag)).map((flag) => [flag, r.bool(flag)])),
      ...(verificationToken !== undefined ? { verificationToken } : {}),
      ...(clientSignature !== undefined ? { clientSignature } : {}),
    }
  },
  run: async (ctx, p) => {
    if (ctx.organization.parentOrganizationId !== undefined)
      throw new PermissionError({
        field: 'organizationId',
        message: 'a sub-organization cannot create sub-organizations; submit this in the parent organization',
      })
    await refuseClaimsFromPluginUsers(ctx, p.rootUsers)
    const id = ctx.newId()
    const vouched = callerVouchesForContacts(ctx)
    const users: UserRow[] = await mapInOrder(
      p.rootUsers,
      async (params) =>
        await ctx.tx.put('users', {
          id: ctx.newId(),
          organizationId: id,
          userName: params.userName,
          // Proven later by the verification token or an OIDC token's e-mail, if at all.
          ...newUserContacts(params, vouched),
          createdAt: ctx.now,
          updatedAt: ctx.now,
        }),
    )
    const subOrganization = await ctx.tx.put('organizations', {
      id,
      name: p.subOrganizationName,
      parentOrganizationId: ctx.organization.id,
      rootUserIds: users.map((user) => user.id),
      rootQuorumThreshold: p.rootQuorumThreshold,
      ...(p.disableEmailRecovery !== undefined ? { disableEmailRecovery: p.disableEmailRecovery } : {}),
      ...(p.disableEmailAuth !== undefined ? { disableEmailAuth: p.disableEmailAuth } : {}),
      ...(p.disableSmsAuth !== undefined ? { disableSmsAuth: p.disableSmsAuth } : {}),
      ...(p.disableOtpEmailAuth !== undefined ? { disableOtpEmailAuth: p.disableOtpEmailAuth } : {}),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    if (vouched) await refuseContactsHeldElsewhere(ctx, id, p.rootUsers)
    const hookContext: SubOrganizationHookContext = { ...ctx, subOrganization }
    const hooks = ctx.registry.plugins
      .map((plugin) => plugin.subOrganization)
      .filter((hook) => hook !== undefined)
    for (const [index, params] of p.rootUsers.entries()) {
      const user = users[index]!
      const field = `parameters.rootUsers[${index}]`
      await addNewUserCredentials(ctx, user, params, field)
      if (params.oauthProviders.length > 0) {
        const hook = hooks.find((candidate) => candidate.oauthProviders)?.oauthProviders
        if (!hook)
          throw new FieldError({
            field: `${field}.oauthProviders`,
            message: 'this service has no OAuth sign-in plugin',
          })
        await hook(hookContext, user, params.oauthProviders, `${field}.oauthProviders`)
      }
    }
    if (p.verificationToken !== undefined) {
      const hook = hooks.find((candidate) => candidate.verificationToken)?.verificationToken
      if (!hook)
        throw new FieldError({
          field: 'parameters.verificationToken',
          message: 'this service has no OTP sign-in plugin',
        })
      await hook(hookContext, p.verificationToken, users, {
        // Not in the protocol's parameter type: the published V7/V8 intents carry it.
        clientSignature: (p as { clientSignature?: unknown }).clientSignature,
        otherwise: 'refuse',
      })
    }
    const wallet = p.wallet
      ? await createWalletRecords(ctx, {
          organizationId: id,
          walletName: p.wallet.walletName,
          accounts: p.wallet.accounts,
          mnemonicLength: p.wallet.mnemonicLength ?? 12,
          field: 'parameters.wallet.accounts',
        })
      : undefined
    return {
      subOrganizationId: id,
      ...(wallet ? { wallet } : {}),
      rootUserIds: users.map((user) => user.id),
    }
  },
})

/**
 * `oidcClaims` are the caller's word: a plugin's own user (the auth proxy, which forwards what a
 * browser sends) may not vouch for an identity, or anyone could sign up as a stranger's Google
 * account and capture that person's first OAuth sign-in.
 */
async function refuseClaimsFromPluginUsers(ctx: ActivityContext, rootUsers: RootUserParams[]) {
  for (const [index, user] of rootUsers.entries()) {
    const claimed = user.oauthProviders.findIndex((item) => 'oidcClaims' in item && item.oidcClaims)
    if (claimed < 0) continue
    for (const plugin of ctx.registry.plugins)
      if (await plugin.ownsCaller?.(ctx.caller, ctx.runtime))
        throw new PermissionError({
          field: `parameters.rootUsers[${index}].oauthProviders[${claimed}].oidcClaims`,
          message: "oidcClaims are taken from the organization's own users only; sign up with an oidcToken",
        })
  }
}

/**
 * A contact the operator vouches for routes logins, so it may belong to one account of the parent:
 * pregenerating an account for a contact another sub-organization holds verified (pregenerated
 * before, or the person signed up meanwhile) is refused, naming the field, rather than leaving
 * the person's next login to pick one of two accounts.
 */
async function refuseContactsHeldElsewhere(ctx: ActivityContext, id: string, rootUsers: RootUserParams[]) {
  const contacts = rootUsers.flatMap((user, index) => [
    ...(user.userEmail
      ? [
          {
            kind: 'email' as const,
            value: user.userEmail.trim().toLowerCase(),
            field: `parameters.rootUsers[${index}].userEmail`,
          },
        ]
      : []),
    ...(user.userPhoneNumber
      ? [
          {
            kind: 'phone' as const,
            value: user.userPhoneNumber,
            field: `parameters.rootUsers[${index}].userPhoneNumber`,
          },
        ]
      : []),
  ])
  if (contacts.length === 0) return
  for (const contact of contacts) {
    const [holder] = await accountsHoldingContact(ctx.tx, {
      parentId: ctx.organization.id,
      kind: contact.kind,
      contact: contact.value,
      exceptId: id,
    })
    if (holder !== undefined)
      throw new ConflictError({
        field: contact.field,
        message: `${contact.field} already belongs to account ${holder}: give that account's sub-organization to this person instead`,
      })
  }
  // The claims make a concurrent import or pregeneration of the same contact meet the primary key
  // (kernel/accountClaims.ts); a claim whose account no longer holds the contact is taken over.
  for (const contact of contacts)
    await claimForAccount(
      ctx.tx,
      { organizationId: ctx.organization.id, subOrganizationId: id, now: ctx.now, ...contact },
      async (held) =>
        !(await ctx.tx.findBy('users', 'organizationId', held.subOrganizationId)).some((user) =>
          holdsVerifiedContact(user, contact.kind, contact.value),
        ),
    )
}
