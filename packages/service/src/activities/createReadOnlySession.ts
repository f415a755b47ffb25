import { READ_ONLY_SESSION_SECONDS, signSession } from '../domain/sessions.ts'
import { defineActivity } from '../kernel/registry.ts'

/** A one-hour read-only session JWT (presented as `X-Session` on query routes). */
export const createReadOnlySession = defineActivity('create_read_only_session', {
  parse: () => ({}) as Record<string, never>,
  run: async (ctx) => {
    const user = (await ctx.tx.get('users', ctx.caller.userId))!
    const exp = Math.floor(ctx.now / 1000) + READ_ONLY_SESSION_SECONDS
    const session = signSession(ctx.runtime, {
      exp,
      iat: Math.floor(ctx.now / 1000),
      public_key: '',
      session_type: 'SESSION_TYPE_READ_ONLY',
      user_id: user.id,
      organization_id: ctx.organization.id,
    })
    return {
      organizationId: ctx.organization.id,
      organizationName: ctx.organization.name,
      userId: user.id,
      username: user.userName,
      session,
      sessionExpiry: String(exp),
    }
  },
})
