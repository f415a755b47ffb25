import { ATTESTED_STAMP_HEADER } from '@latchkey/protocol'
import { ATTESTED_CREDENTIAL_PREFIX, sessionOriginOf } from '../../domain/sessions.ts'
import { defineActivity } from '../../kernel/registry.ts'
import { issueLoginSession, parseLogin } from './issueLoginSession.ts'

/** The token a caller vouched for by one (`X-Stamp-Attested`) logs in with, spent once; none for a registered key. */
function attestingToken(credentialId: string) {
  if (!credentialId.startsWith(ATTESTED_CREDENTIAL_PREFIX)) return undefined
  const [kind, ...id] = credentialId.slice(ATTESTED_CREDENTIAL_PREFIX.length).split(':')
  const otp = kind === 'verification-token'
  return {
    kind: otp ? 'verification-token' : 'oidc-token',
    id: id.join(':'),
    error: {
      errorCode: otp ? 'VERIFICATION_TOKEN_INVALID' : 'OIDC_TOKEN_REPLAYED',
      message: `this ${otp ? 'verification' : 'OIDC'} token was already used to log in`,
      field: ATTESTED_STAMP_HEADER,
    },
  } as const
}

/**
 * A read-write session for the supplied public key, for a caller who stamped with a passkey or
 * an API key (a wallet key registered as one): passkey/wallet sign-in.
 */
export const stampLogin = defineActivity('stamp_login', {
  resolveSubOrganization: true,
  // The stamp is the proof: the body holds only the session's key and options.
  parse: (r) => parseLogin(r, () => ({})),
  run: async (ctx, p) =>
    issueLoginSession(ctx, {
      user: (await ctx.tx.get('users', ctx.caller.userId))!,
      parameters: p,
      spend: attestingToken(ctx.caller.credential.id),
      origin: await sessionOriginOf(ctx),
    }),
})
