import { p256 } from '@noble/curves/nist.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { importJWK, type JWK, type JWTPayload, jwtVerify, SignJWT } from 'jose'
import { ServiceError } from '../ServiceError.ts'

/** Claims of the OIDC token the service issues after an OAuth exchange. */
export interface ServiceOidcClaims {
  iss: string
  /** The provider's subject for the person. */
  sub: string
  /** The OAuth client id the code was issued to. */
  aud: string
  /** The spec's nonce: hex SHA-256 of the client's compressed public key hex. */
  nonce: string
  jti: string
  iat: number
  exp: number
  /** `OAUTH2_PROVIDER_*` the person signed in with. */
  provider: string
  /** Issuer of the provider's ID token. */
  idp_iss: string
  email?: string
  email_verified?: boolean
  name?: string
}

export interface ServiceOidcOptions {
  /** The service's P-256 signing key (32 bytes). */
  privateKey: Uint8Array
  /** `iss` of the tokens. */
  issuer: string
  /** Epoch milliseconds. @default Date.now */
  now?: () => number
  /** Token lifetime. @default 600 */
  lifetimeSeconds?: number
}

/** JWK of a raw P-256 key; with `d` when `withPrivate`. */
export function p256Jwk(privateKey: Uint8Array, withPrivate: boolean): JWK {
  const point = p256.getPublicKey(privateKey, false)
  const jwk: JWK = {
    kty: 'EC',
    crv: 'P-256',
    x: base64urlnopad.encode(point.slice(1, 33)),
    y: base64urlnopad.encode(point.slice(33, 65)),
    alg: 'ES256',
    use: 'sig',
    kid: bytesToHex(sha256(point).slice(0, 8)),
  }
  return withPrivate ? { ...jwk, d: base64urlnopad.encode(privateKey) } : jwk
}

export type ServiceOidc = ReturnType<typeof createServiceOidc>

/**
 * The service's own OIDC tokens (ES256): `oauth2_authenticate` issues them after verifying the
 * provider's ID token; `oauth_login`, `account` and sign-up accept only these.
 */
export function createServiceOidc(options: ServiceOidcOptions) {
  const now = options.now ?? Date.now
  const lifetime = options.lifetimeSeconds ?? 600
  const publicJwk = p256Jwk(options.privateKey, false)
  const signingKey = importJWK(p256Jwk(options.privateKey, true), 'ES256')
  const verifyingKey = importJWK(publicJwk, 'ES256')

  async function issue(
    claims: Omit<ServiceOidcClaims, 'iss' | 'iat' | 'exp' | 'jti'> & { jti?: string },
  ): Promise<{ token: string; claims: ServiceOidcClaims }> {
    const iat = Math.floor(now() / 1000)
    const full: ServiceOidcClaims = {
      ...claims,
      iss: options.issuer,
      iat,
      exp: iat + lifetime,
      jti: claims.jti ?? crypto.randomUUID(),
    }
    const token = await new SignJWT(full as unknown as JWTPayload)
      .setProtectedHeader({ alg: 'ES256', kid: publicJwk.kid!, typ: 'JWT' })
      .sign(await signingKey)
    return { token, claims: full }
  }

  /** Verifies signature, issuer and expiry; throws `OIDC_TOKEN_INVALID` with the reason. */
  async function verify(token: unknown, field = 'oidcToken'): Promise<ServiceOidcClaims> {
    if (typeof token !== 'string' || token.split('.').length !== 3)
      throw new ServiceError('OIDC_TOKEN_INVALID', `${field} is not a JWT`, field)
    try {
      const { payload } = await jwtVerify(token, await verifyingKey, {
        issuer: options.issuer,
        algorithms: ['ES256'],
        currentDate: new Date(now()),
        requiredClaims: ['sub', 'aud', 'nonce', 'jti', 'exp'],
      })
      return payload as unknown as ServiceOidcClaims
    } catch (error) {
      const reason = (error as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'has expired' : 'is not valid'
      throw new ServiceError('OIDC_TOKEN_INVALID', `${field} ${reason}: ${(error as Error).message}`, field)
    }
  }

  return { issue, verify, issuer: options.issuer, jwk: publicJwk }
}
