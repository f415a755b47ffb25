import { issueSession, MAX_SESSION_SECONDS, normalizeSessionPublicKey } from '../../domain/sessions.ts'
import { defineActivity } from '../../registry.ts'
import { ATTESTED_CREDENTIAL_PREFIX } from '../attested/verifyAttestedStamp.ts'
import { spendOnce } from '../spendOnce.ts'

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
  run: async (ctx, p) => {
    const user = (await ctx.tx.get('users', ctx.caller.userId))!
    // A caller vouched for by a token (X-Stamp-Attested) logs in once per token.
    const credentialId = ctx.caller.credential.id
    if (credentialId.startsWith(ATTESTED_CREDENTIAL_PREFIX)) {
      const [kind, ...id] = credentialId.slice(ATTESTED_CREDENTIAL_PREFIX.length).split(':')
      const otp = kind === 'verification-token'
      await spendOnce(ctx, otp ? 'verification-token' : 'oidc-token', id.join(':'), {
        errorCode: otp ? 'VERIFICATION_TOKEN_INVALID' : 'OIDC_TOKEN_REPLAYED',
        message: `this ${otp ? 'verification' : 'OIDC'} token was already used to log in`,
        field: 'X-Stamp-Attested',
      })
    }
    const { session } = await issueSession(ctx, {
      user,
      publicKey: p.publicKey,
      expirationSeconds: p.expirationSeconds,
      invalidateExisting: p.invalidateExisting,
    })
    return { session }
  },
})
