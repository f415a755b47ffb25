import {
  assertRootKeepsAccess,
  endSessionsOpenedWith,
  endSignIns,
  isLiveSession,
} from '../domain/sessions.ts'
import { findUser } from '../domain/users.ts'
import { recordAppEvent } from '../kernel/appEvents.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { NotFoundError, PermissionError } from '../kernel/base/errors.ts'
import { guardCredentialRemoval } from '../kernel/contactGuard.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * Revokes API keys (also how a client logs out: it deletes its session key). The read-write
 * sessions a deleted registered key opened, and their renewals, end with it (`endSessionsOpenedWith`);
 * a deleted session key ends its sign-in's other renewals, but for a refresh giving its old key
 * back (`endSignIns`).
 */
export const deleteApiKeys = defineActivity('delete_api_keys', {
  // A session key belongs to whichever user logged in, root or not; it may revoke its own keys.
  selfService: true,
  parse: (r) => ({ userId: r.string('userId', { max: 200 }), apiKeyIds: r.ids('apiKeyIds', { min: 1 }) }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    const isRoot = ctx.organization.rootUserIds.includes(ctx.caller.userId)
    if (!isRoot && ctx.caller.userId !== user.id)
      throw new PermissionError({
        field: 'parameters.userId',
        message: 'only root users may delete other users\u2019 keys',
      })
    // Never the last API key an MFA policy of the user needs (the guard a wing registers).
    await guardCredentialRemoval(ctx.runtime, {
      tx: ctx.tx,
      now: ctx.now,
      organizationId: ctx.organization.id,
      userId: user.id,
      removed: new Set(p.apiKeyIds),
      field: 'parameters.apiKeyIds',
    })
    let loggedOut = 0
    let deleted = 0
    const removed = await mapInOrder(p.apiKeyIds, async (id, index) => {
      const key = await ctx.tx.get('apiKeys', id)
      if (!key || key.userId !== user.id)
        throw new NotFoundError({
          code: 'API_KEY_NOT_FOUND',
          field: `parameters.apiKeyIds[${index}]`,
          message: `user ${user.id} has no API key ${id}`,
        })
      await ctx.tx.delete('apiKeys', id)
      if (isLiveSession(key, ctx.now)) {
        const logout = ctx.caller.credential.kind === 'API_KEY' && ctx.caller.credential.id === id
        if (logout) loggedOut++
        else deleted++
        await recordAppEvent(ctx.runtime, ctx.tx, {
          id: `${ctx.activityId}.revoked.${id}`,
          organization: ctx.organization,
          type: 'LATCHKEY_SESSION_REVOKED',
          data: {
            userId: user.id,
            apiKeyId: id,
            reason: logout ? 'logout' : 'deleted',
            activityId: ctx.activityId,
          },
        })
      }
      return key
    })
    await endSessionsOpenedWith(ctx, user, { apiKeys: removed })
    await endSignIns(ctx, user, removed)
    await assertRootKeepsAccess(ctx, user, 'parameters.apiKeyIds')
    if (loggedOut > 0) ctx.report('signin.sessions_revoked', { reason: 'logout', count: loggedOut })
    if (deleted > 0) ctx.report('signin.sessions_revoked', { reason: 'deleted', count: deleted })
    return { apiKeyIds: p.apiKeyIds }
  },
})
