/** An API key's stamp over the raw body (`ApiKeyStamp`, base64url JSON). */
export const STAMP_HEADER = 'X-Stamp'
/** A passkey assertion whose challenge is the body's hash (`WebAuthnStamp`, JSON). */
export const WEBAUTHN_STAMP_HEADER = 'X-Stamp-WebAuthn'
/** Read-only session JWT, accepted on query routes only. */
export const SESSION_HEADER = 'X-Session'
/**
 * `stamp_login` stamped by a key a token vouches for (the published clients' OTP and OAuth
 * login): base64url JSON `{ publicKeyAttestation, scheme, publicKey, signature }`, `signature`
 * DER hex ECDSA-P256-SHA256 over the body by `publicKey`, `publicKeyAttestation` the
 * verification token (`STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN`, bound to `publicKey` at
 * `otp_verify`) or the OIDC token (`STAMP_ATTESTED_SCHEME_P256_OIDC`, nonce = sha256(publicKey)).
 */
export const ATTESTED_STAMP_HEADER = 'X-Stamp-Attested'
/** The auth-proxy configuration a `/v1/*` call is made under. */
export const PROXY_CONFIG_HEADER = 'X-Auth-Proxy-Config-Id'
/**
 * A per-call nonce the auth proxy adds to the calls it forwards to the activity API: it is part
 * of the replay fingerprint, honoured only for stamps of the proxy's own user (two instances may
 * sign identical bodies in the same millisecond).
 */
export const PROXY_NONCE_HEADER = 'X-Latchkey-Proxy-Nonce'
/** The published clients' version, sent on every stamped call. */
export const CLIENT_VERSION_HEADER = 'X-Client-Version'
/** The published clients' captcha token, sent on sign-up and OTP. */
export const CAPTCHA_TOKEN_HEADER = 'X-Captcha-Token'

/**
 * Request headers a browser may send to the service (CORS `Access-Control-Allow-Headers` of
 * `/public/*` and `/v1/*`): ours, and what the published clients send.
 */
export const CORS_ALLOWED_HEADERS: readonly string[] = [
  'Content-Type',
  'Accept',
  STAMP_HEADER,
  WEBAUTHN_STAMP_HEADER,
  ATTESTED_STAMP_HEADER,
  SESSION_HEADER,
  CLIENT_VERSION_HEADER,
  PROXY_CONFIG_HEADER,
  CAPTCHA_TOKEN_HEADER,
]
