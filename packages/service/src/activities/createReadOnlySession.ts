import { READ_ONLY_SESSION_SECONDS, sessionCeilingOf, signSession } from '../domain/sessions.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * A one-hour read-only session JWT (presented as `X-Session` on query routes), or shorter under
 * the operator's ceiling on sessions (`maxSessionExpirationSeconds`). Asked for with an API key (a
 * login session's key), it is bound to that key: it expires no later than the key, and ends when
 * the key is deleted (a logout) or expires (`authenticate.ts`), so a session's sign-out ends the
 * reads it opened. Asked for with a passkey, it ends when the passkey is removed.
 */
export const createReadOnlySession = defineActivity('create_read_only_session', {
  parse: () => ({}) as Record<string, never>,
  run: async (ctx) => {
    const user = (await ctx.tx.get('users', ctx.caller.userId))!
    const ceiling = await sessionCeilingOf(ctx.tx, ctx.organization.id)
    let exp =
      Math.floor(ctx.now / 1000) + Math.min(READ_ONLY_SESSION_SECONDS, ceiling ?? Number.POSITIVE_INFINITY)
    const { credential } = ctx.caller
    const key = credential.kind === 'API_KEY' ? await ctx.tx.get('apiKeys', credential.id) : undefined
    if (key?.expirationSeconds !== undefined)
      exp = Math.min(exp, Math.floor((key.createdAt + Number(key.expirationSeconds) * 1000) / 1000))
    const session = signSession(ctx.runtime, {
      exp,
      iat: Math.floor(ctx.now / 1000),
      public_key: '',
      session_type: 'SESSION_TYPE_READ_ONLY',
      user_id: user.id,
      organization_id: ctx.organization.id,
      ...(key ? { api_key_id: key.id } : {}),
      ...(credential.kind === 'WEBAUTHN' ? { authenticator_id: credential.id } : {}),
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
