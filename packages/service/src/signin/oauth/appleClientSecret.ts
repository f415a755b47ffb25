import { importPKCS8, SignJWT } from 'jose'
import type { AppleClientKey } from './OAuthProviderConfig.ts'

/** Audience of Apple's client-secret JWTs. */
export const APPLE_AUDIENCE = 'https://appleid.apple.com'

/** Lifetime of a client secret the service signs (Apple accepts up to six months). */
const LIFETIME_SECONDS = 60 * 60
/** A secret this close to its expiry is replaced, so none expires on its way to Apple. */
const RENEW_BEFORE_SECONDS = 5 * 60

/**
 * Sign in with Apple's client secret: an ES256 JWT `{ iss: teamId, sub: clientId, aud:
 * appleid.apple.com, iat, exp }` with `kid` the key id, signed by the operator's key. Returns a
 * function giving the current secret, signed again shortly before it expires.
 */
export function appleClientSecret(key: AppleClientKey, clientId: string, now: () => number) {
  let current: { secret: string; exp: number } | undefined
  let privateKey: Promise<CryptoKey> | undefined
  return async (): Promise<string> => {
    const iat = Math.floor(now() / 1000)
    if (current && current.exp - RENEW_BEFORE_SECONDS > iat) return current.secret
    privateKey ??= importPKCS8(key.privateKey, 'ES256')
    const exp = iat + LIFETIME_SECONDS
    const secret = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: key.keyId })
      .setIssuer(key.teamId)
      .setSubject(clientId)
      .setAudience(APPLE_AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(await privateKey)
    current = { secret, exp }
    return secret
  }
}
