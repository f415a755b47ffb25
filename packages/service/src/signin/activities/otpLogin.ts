import { issueSession, MAX_SESSION_SECONDS, normalizeSessionPublicKey } from '../../domain/sessions.ts'
import { ApiError } from '../../errors.ts'
import { defineActivity } from '../../registry.ts'
import { checkLoginSignature, readClientSignature } from '../clientSignature/checkClientSignature.ts'
import { spendOnce } from '../spendOnce.ts'
import { verifyVerificationToken } from '../verifyVerificationToken.ts'

/**
 * OTP login: a verification token for a user's e-mail or phone, plus (when the token is bound
 * to a key) the client's signature over it, yields a read-write session for `publicKey`. The
 * auth proxy submits it inside the user's sub-organization.
 */
export const otpLogin = defineActivity('otp_login', {
  allowNonRoot: true,
  allowParentOrganization: true,
  skipConsensus: true,
  parse: (r) => {
    const expirationSeconds = r.optUintString('expirationSeconds', { max: MAX_SESSION_SECONDS })
    const invalidateExisting = r.optBool('invalidateExisting')
    const clientSignature = readClientSignature(r)
    return {
      verificationToken: r.string('verificationToken', { max: 8192 }),
      publicKey: normalizeSessionPublicKey(r.string('publicKey', { max: 200 }), r.field('publicKey')),
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
      ...(invalidateExisting !== undefined ? { invalidateExisting } : {}),
      ...(clientSignature !== undefined ? { clientSignature } : {}),
    }
  },
  run: async (ctx, p) => {
    const claims = await verifyVerificationToken(
      ctx.service,
      p.verificationToken,
      'parameters.verificationToken',
      ctx.organization,
    )
    // Issue 13 class 1: a signature over the token alone says nothing about which key gets the
    // session, so an intercepted (token, signature) pair could be redeemed for any key.
    checkLoginSignature({
      signature: p.clientSignature,
      token: p.verificationToken,
      claims,
      sessionPublicKey: p.publicKey,
      field: 'parameters.clientSignature',
      publicKeyField: 'parameters.publicKey',
    })
    const org = ctx.organization
    const email = claims.verification_type === 'OTP_TYPE_EMAIL'
    if (email ? org.disableOtpEmailAuth || org.disableEmailAuth : org.disableSmsAuth)
      throw new ApiError(
        'PERMISSION_DENIED',
        `${email ? 'e-mail' : 'SMS'} OTP sign-in is disabled for organization ${org.id}`,
        'parameters.verificationToken',
      )
    const user = (await ctx.tx.findBy('users', 'organizationId', org.id)).find((u) =>
      email ? u.userEmail?.toLowerCase() === claims.contact : u.userPhoneNumber === claims.contact,
    )
    if (!user)
      throw new ApiError(
        'USER_NOT_FOUND',
        `no user with this ${email ? 'e-mail address' : 'phone number'} in organization ${org.id}`,
        'parameters.verificationToken',
      )
    await spendOnce(ctx, 'verification-token', claims.id, {
      errorCode: 'VERIFICATION_TOKEN_INVALID',
      message: 'this verification token was already used to log in; verify a new code',
      field: 'parameters.verificationToken',
    })
    const { session } = await issueSession(ctx, {
      user,
      publicKey: p.publicKey,
      expirationSeconds: p.expirationSeconds,
      invalidateExisting: p.invalidateExisting,
      credentialType: 'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256',
      apiKeyName: `OTP session ${new Date(ctx.now).toISOString()}`,
    })
    return { session }
  },
})
