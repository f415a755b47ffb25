import { CURVES, OAUTH2_PROVIDERS, type ProxyResponse, type WalletParams } from '@latchkey/protocol'
import { MAX_SESSION_SECONDS } from '../../domain/sessions.ts'
import { ConflictError, CredentialError, FieldError } from '../../kernel/base/errors.ts'
import { objectItem, type Reader } from '../../kernel/Reader.ts'
import { checkSignupSignature, readClientSignature } from '../clientSignature/checkClientSignature.ts'
import { methodOf } from '../oauth/providerEndpoints.ts'
import { normalizeContact } from '../otp/normalizeContact.ts'
import { verifyVerificationToken } from '../verifyVerificationToken.ts'
import { claimsOf } from './claimsOf.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/signup`: creates a sub-organization for a new user, with proof of each contact it claims. */
export async function signup(call: ProxyCall, r: Reader): Promise<ProxyResponse<'signup'>> {
  // Checked as `otp_init` checks a contact: an address the sign-up stores receives codes later.
  const email = r.optString('userEmail', { max: 320 })
  const userEmail = email === undefined ? undefined : normalizeContact('OTP_TYPE_EMAIL', email, 'userEmail')
  const userPhoneNumber = r.optString('userPhoneNumber', { max: 32 })?.trim()
  const verificationToken = r.optString('verificationToken', { max: 8192 })
  // Each item an object (400 naming `apiKeys[i]`), passed on as sent: the client signed them.
  const apiKeys = (r.optArray('apiKeys', objectItem, { max: 10 }) ?? []).map((key) => key.value)
  const authenticators = (r.optArray('authenticators', objectItem, { max: 10 }) ?? []).map(
    (authenticator) => authenticator.value,
  )
  const oauthProviders = r.optArray('oauthProviders', objectItem, { max: 5 }) ?? []

  // Every sign-in method the new account brings must be switched on.
  if (authenticators.length > 0) call.requireMethod('passkey', 'passkey sign-up')
  // A short-lived P-256 key is the client's session key riding along with another method;
  // any other key (an Ethereum or Solana wallet, a permanent API key) is wallet sign-up.
  const isSessionKey = (key: Record<string, unknown>) =>
    key.curveType === 'API_KEY_CURVE_P256' &&
    typeof key.expirationSeconds === 'string' &&
    /^\d{1,9}$/.test(key.expirationSeconds) &&
    Number(key.expirationSeconds) <= MAX_SESSION_SECONDS
  // The operator's ceiling holds for the session key a sign-up brings as for a login's; it is
  // refused, not cut: the client signed the request with its lifetime.
  const ceiling = call.settings.maxSessionExpirationSeconds
  for (const [index, key] of apiKeys.entries())
    if (ceiling !== undefined && isSessionKey(key) && Number(key.expirationSeconds) > Number(ceiling))
      throw new FieldError({
        field: `apiKeys[${index}].expirationSeconds`,
        reason: `must be at most ${ceiling}: the longest session this app allows (maxSessionExpirationSeconds of its auth-proxy settings)`,
      })
  const walletKeys = apiKeys.filter((key) => !isSessionKey(key))
  if (walletKeys.length > 0) call.requireMethod('wallet', 'wallet sign-up')
  const oauthClaims = oauthProviders.map((provider) => claimsOf(provider.value.oidcToken))
  for (const claims of oauthClaims) {
    const provider = claims.provider
    call.requireMethod(
      OAUTH2_PROVIDERS.includes(provider as never) ? methodOf(provider as never) : undefined,
      `sign-up with ${String(provider ?? 'this OAuth provider')}`,
    )
  }
  const tokenClaims = verificationToken !== undefined ? claimsOf(verificationToken) : undefined
  if (verificationToken !== undefined)
    // A token bound to a key at otp_verify creates only the account that key
    // consented to, so an intercepted token cannot sign up with the attacker's credentials.
    checkSignupSignature({
      signature: readClientSignature(r),
      token: verificationToken,
      claims: await verifyVerificationToken(call.runtime, verificationToken, 'verificationToken', {
        id: call.organizationId,
      }),
      body: {
        apiKeys,
        authenticators,
        oauthProviders: oauthProviders.map((p) => p.value),
        userEmail,
        userPhoneNumber,
      },
      field: 'clientSignature',
    })
  if (tokenClaims)
    call.requireMethod(tokenClaims.verification_type === 'OTP_TYPE_SMS' ? 'sms' : 'email', 'OTP sign-up')
  if (authenticators.length + walletKeys.length + oauthProviders.length === 0 && !verificationToken)
    throw new FieldError({
      code: 'FIELD_REQUIRED',
      message:
        'sign-up needs a way to log in: authenticators, wallet apiKeys, oauthProviders or a verificationToken',
    })
  // An unproven e-mail or phone would route someone else's OTP login into this account: the
  // proxy takes them only with proof (the activity checks the proof's signature), or, for the
  // e-mail, as the address an OAuth token of the request carries. The activity verifies that one
  // only when the provider said it verified it (`tokenProvesEmail`); from a provider that did not
  // say (Facebook's Limited Login, many custom issuers) the account signs in by the identity and
  // holds the address unverified, which routes no login and answers no lookup.
  if (userEmail !== undefined) {
    const byOtp = tokenClaims?.verification_type === 'OTP_TYPE_EMAIL' && tokenClaims.contact === userEmail
    const byOauth = oauthClaims.some((claims) => claims.email === userEmail)
    if (!byOtp && !byOauth)
      throw new CredentialError({
        code: 'VERIFICATION_TOKEN_INVALID',
        field: 'userEmail',
        reason:
          'must be proven by a verificationToken from otp_verify (or be the e-mail of one of the oauthProviders tokens)',
      })
    if (await call.findSubOrganization('EMAIL', userEmail))
      throw new ConflictError({
        field: 'userEmail',
        message: 'an account with this e-mail address exists; log in instead',
      })
  }
  if (userPhoneNumber !== undefined) {
    if (!(tokenClaims?.verification_type === 'OTP_TYPE_SMS' && tokenClaims.contact === userPhoneNumber))
      throw new CredentialError({
        code: 'VERIFICATION_TOKEN_INVALID',
        field: 'userPhoneNumber',
        reason: 'must be proven by a verificationToken from otp_verify',
      })
    if (await call.findSubOrganization('PHONE_NUMBER', userPhoneNumber))
      throw new ConflictError({
        field: 'userPhoneNumber',
        message: 'an account with this phone number exists; log in instead',
      })
  }

  const userName = r.optString('userName', { max: 256 }) ?? userEmail ?? userPhoneNumber ?? 'New user'
  const wallet = r.optObject('wallet')
  const result = await call.submit('create_sub_organization', {
    subOrganizationName: r.optString('organizationName', { max: 256 }) ?? `${userName}'s organization`,
    rootUsers: [
      {
        userName,
        ...(userEmail !== undefined ? { userEmail } : {}),
        ...(userPhoneNumber !== undefined ? { userPhoneNumber } : {}),
        apiKeys,
        authenticators,
        oauthProviders: oauthProviders.map((p) => p.value),
      },
    ],
    rootQuorumThreshold: 1,
    ...(wallet ? { wallet: walletParams(wallet) } : {}),
    ...(verificationToken !== undefined ? { verificationToken } : {}),
  })
  return {
    organizationId: result.subOrganizationId,
    userId: result.rootUserIds[0]!,
    ...(result.wallet ? { walletId: result.wallet.walletId, addresses: result.wallet.addresses } : {}),
  }
}

/** The seed's `{ path, curve }` (one account, Ethereum or Solana address) or the activity API's wallet. */
function walletParams(wallet: Reader): WalletParams | Record<string, unknown> {
  if (wallet.has('walletName') || wallet.has('accounts')) return wallet.value
  const curve = wallet.enum('curve', CURVES)
  const path = wallet.string('path', { max: 200 })
  return {
    walletName: 'Default Wallet',
    accounts: [
      {
        curve,
        pathFormat: 'PATH_FORMAT_BIP32',
        path,
        addressFormat: curve === 'CURVE_SECP256K1' ? 'ADDRESS_FORMAT_ETHEREUM' : 'ADDRESS_FORMAT_SOLANA',
      },
    ],
  }
}
