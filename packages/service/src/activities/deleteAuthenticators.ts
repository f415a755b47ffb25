import { passkeyValue, releaseUnheld } from '../domain/claimedValues.ts'
import { assertRootKeepsAccess, endSessionsOpenedWith } from '../domain/sessions.ts'
import { findUser } from '../domain/users.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { NotFoundError } from '../kernel/base/errors.ts'
import { guardCredentialRemoval } from '../kernel/contactGuard.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * Removes passkeys from a user of this organization; never the only root user's last way back in,
 * nor the last passkey a step of the user's MFA policy can be proven with.
 * A passkey an import claimed gives up its claim (kernel/accountClaims.ts). The read-write sessions
 * the passkey opened, and their renewals, end with it (`endSessionsOpenedWith`): taking a lost
 * device off the account ends what it signed in to.
 */
export const deleteAuthenticators = defineActivity('delete_authenticators', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    authenticatorIds: r.ids('authenticatorIds', { min: 1 }),
  }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    // Never the last passkey an MFA policy of the user needs (the guard a wing registers).
    await guardCredentialRemoval(ctx.runtime, {
      tx: ctx.tx,
      now: ctx.now,
      organizationId: ctx.organization.id,
      userId: user.id,
      removed: new Set(p.authenticatorIds),
      field: 'parameters.authenticatorIds',
    })
    const removed = await mapInOrder(p.authenticatorIds, async (id, index) => {
      const authenticator = await ctx.tx.get('authenticators', id)
      if (!authenticator || authenticator.userId !== user.id)
        throw new NotFoundError({
          code: 'AUTHENTICATOR_NOT_FOUND',
          field: `parameters.authenticatorIds[${index}]`,
          message: `user ${user.id} has no authenticator ${id}`,
        })
      await ctx.tx.delete('authenticators', id)
      return passkeyValue(authenticator)
    })
    await endSessionsOpenedWith(ctx, user, { authenticatorIds: p.authenticatorIds })
    await assertRootKeepsAccess(ctx, user, 'parameters.authenticatorIds')
    await releaseUnheld(ctx.tx, ctx.organization, removed)
    return { authenticatorIds: p.authenticatorIds }
  },
})
