import { SESSION_KEY_MESSAGES } from '@latchkey/protocol'
import { READ_ONLY_SESSION_SECONDS, sessionCeilingOf, signSession } from '../domain/sessions.ts'
import { AuthenticationError } from '../kernel/base/errors.ts'
import type { Caller } from '../kernel/Caller.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import { defineActivity } from '../kernel/registry.ts'
import { keyExpiresAt } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'

/**
 * A one-hour read-only session JWT (presented as `X-Session` on query routes), or shorter under
 * the operator's ceiling on sessions (`maxSessionExpirationSeconds`). Asked for with an API key (a
 * login session's key), it is bound to that key: it expires no later than the key, and ends when
 * the key is deleted (a logout) or expires (`authenticate.ts`), so a session's sign-out ends the
 * reads it opened. Asked for with a passkey, it ends when the passkey is removed. A key gone by the
 * time it runs (logged out after the request was let in) makes none: the request is refused as a
 * new one would be (401 `PUBLIC_KEY_NOT_FOUND`), never answered with a token bound to nothing.
 *
 * The token is a bearer credential for every query of the organization, as its maker: it is
 * answered to the request that made it and never stored (`shownOnce`), so no other reader of the
 * organization takes it from `get_activity`. Its maker, asking with the same credential, is shown
 * it again (a replay of the request, or polling an activity that ran after waiting): the same
 * claims signed again, no later expiry (`shownAgain`).
 */
export const createReadOnlySession = defineActivity('create_read_only_session', {
  shownOnce: ['session'],
  parse: () => ({}) as Record<string, never>,
  run: async (ctx) => {
    const user = (await ctx.tx.get('users', ctx.caller.userId))!
    const ceiling = await sessionCeilingOf(ctx.tx, ctx.organization.id)
    let exp =
      Math.floor(ctx.now / 1000) + Math.min(READ_ONLY_SESSION_SECONDS, ceiling ?? Number.POSITIVE_INFINITY)
    const binding = await bindingOf(ctx.tx, ctx.caller)
    if (binding.expiresAt !== undefined) exp = Math.min(exp, binding.expiresAt)
    const session = readOnlySession(ctx.runtime, {
      exp,
      iat: Math.floor(ctx.now / 1000),
      userId: user.id,
      organizationId: ctx.organization.id,
      claims: binding.claims,
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
  shownAgain: async ({ runtime, reads, caller }, row) => ({
    session: readOnlySession(runtime, {
      exp: Number(row.result.sessionExpiry),
      iat: Math.floor(row.updatedAt / 1000),
      userId: row.userId,
      organizationId: row.organizationId,
      claims: (await bindingOf(reads, caller)).claims,
    }),
  }),
})

/**
 * What binds a read-only session to the credential that asked for it: an API key by `api_key_id`,
 * capping the session's expiry at the key's; a passkey by `authenticator_id`. A key that is not
 * there (any more) binds nothing, so it makes nothing: refused, never a token no logout can end.
 */
async function bindingOf(
  reads: Reads,
  { credential, userId }: Caller,
): Promise<{ claims: { api_key_id?: string; authenticator_id?: string }; expiresAt?: number }> {
  if (credential.kind === 'WEBAUTHN') return { claims: { authenticator_id: credential.id } }
  const key = credential.kind === 'API_KEY' ? await reads.get('apiKeys', credential.id) : undefined
  if (key?.userId !== userId)
    throw new AuthenticationError({ code: 'PUBLIC_KEY_NOT_FOUND', message: SESSION_KEY_MESSAGES.notFound })
  const expiresAtMs = keyExpiresAt(key)
  return {
    claims: { api_key_id: key.id },
    ...(expiresAtMs !== undefined ? { expiresAt: Math.floor(expiresAtMs / 1000) } : {}),
  }
}

function readOnlySession(
  runtime: Runtime,
  session: {
    exp: number
    iat: number
    userId: string
    organizationId: string
    claims: { api_key_id?: string; authenticator_id?: string }
  },
): string {
  return signSession(runtime, {
    exp: session.exp,
    iat: session.iat,
    public_key: '',
    session_type: 'SESSION_TYPE_READ_ONLY',
    user_id: session.userId,
    organization_id: session.organizationId,
    ...session.claims,
  })
}
