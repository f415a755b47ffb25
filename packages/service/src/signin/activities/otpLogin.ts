import { contactKindOf, holdsVerifiedContact } from '../../domain/verifiedContact.ts'
import { FieldError, NotFoundError, PermissionError } from '../../kernel/base/errors.ts'
import { defineActivity } from '../../kernel/registry.ts'
import { checkLoginSignature, readClientSignature } from '../clientSignature/checkClientSignature.ts'
import { verifyVerificationToken } from '../verifyVerificationToken.ts'
import { issueLoginSession, parseLogin } from './issueLoginSession.ts'

/**
 * OTP login: a verification token for a user's e-mail or phone, plus (when the token is bound
 * to a key) the client's signature over it, yields a read-write session for `publicKey`. The
 * auth proxy submits it inside the user's sub-organization. V2 differs only in requiring the
 * signature, as the published object.
 */
export const otpLogin = defineActivity('otp_login', {
  allowNonRoot: true,
  allowParentOrganization: true,
  skipConsensus: true,
  // The token it redeems is no reader's to take from its record, failed or waiting (`bearerParameters`).
  bearerParameters: ['verificationToken', 'clientSignature'],
  parse: (r, type) =>
    parseLogin(r, (r) => {
      // V2 requires the published object; the seed's hex string is V1's.
      if (type === 'ACTIVITY_TYPE_OTP_LOGIN_V2') {
        const signature = r.value.clientSignature
        if (typeof signature !== 'object' || signature === null || Array.isArray(signature))
          throw new FieldError({
            code: signature === undefined ? 'FIELD_REQUIRED' : 'FIELD_INVALID',
            field: r.field('clientSignature'),
            reason: `must be { message, publicKey, scheme, signature } in ${type}`,
          })
      }
      const clientSignature = readClientSignature(r)
      return {
        verificationToken: r.string('verificationToken', { max: 8192 }),
        ...(clientSignature !== undefined ? { clientSignature } : {}),
      }
    }),
  run: async (ctx, p) => {
    const claims = await verifyVerificationToken(
      ctx.runtime,
      p.verificationToken,
      'parameters.verificationToken',
      ctx.organization,
    )
    // A signature over the token alone says nothing about which key gets the session, so an
    // intercepted (token, signature) pair could be redeemed for any key.
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
      throw new PermissionError({
        field: 'parameters.verificationToken',
        message: `${email ? 'e-mail' : 'SMS'} OTP sign-in is disabled for organization ${org.id}`,
      })
    // Only a verified contact routes a login: an unproven one may be anybody's address.
    const user = (await ctx.tx.findBy('users', 'organizationId', org.id)).find((u) =>
      holdsVerifiedContact(u, contactKindOf(claims.verification_type), claims.contact),
    )
    if (!user)
      throw new NotFoundError({
        code: 'USER_NOT_FOUND',
        field: 'parameters.verificationToken',
        message: `no user with this ${email ? 'e-mail address' : 'phone number'} in organization ${org.id}`,
      })
    return issueLoginSession(ctx, {
      user,
      parameters: p,
      // The code or token is spent here: no stored credential of the user opened the session.
      origin: {},
      spend: {
        kind: 'verification-token',
        id: claims.id,
        error: {
          errorCode: 'VERIFICATION_TOKEN_INVALID',
          message: 'this verification token was already used to log in; verify a new code',
          field: 'parameters.verificationToken',
        },
      },
      credential: { type: 'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256', label: 'OTP' },
    })
  },
})
