import { issueSession, MAX_SESSION_SECONDS, normalizeSessionPublicKey } from '../../domain/sessions.ts'
import { defineActivity } from '../../registry.ts'

/**
 * A read-write session for the supplied public key, for a caller who stamped with a passkey or
 * an API key (a wallet key registered as one): passkey/wallet sign-in.
 */
export const stampLogin = defineActivity('stamp_login', {
  resolveSubOrganization: true,
  parse: (r) => {
    const expirationSeconds = r.optUintString('expirationSeconds', { max: MAX_SESSION_SECONDS })
    const invalidateExisting = r.optBool('invalidateExisting')
    return {
      publicKey: normalizeSessionPublicKey(r.string('publicKey', { max: 200 }), 'parameters.publicKey'),
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
      ...(invalidateExisting !== undefined ? { invalidateExisting } : {}),
    }
  },
  run: (ctx, p) => {
    const user = ctx.tx.get('users', ctx.caller.userId)!
    const { session } = issueSession(ctx, {
      user,
      publicKey: p.publicKey,
      expirationSeconds: p.expirationSeconds,
      invalidateExisting: p.invalidateExisting,
    })
    return { session }
  },
})
