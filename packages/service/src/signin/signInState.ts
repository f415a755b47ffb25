import { hexToBytes } from '@noble/hashes/utils.js'
import type { Hono } from 'hono'
import { someoneHoldsContact } from '../domain/verifiedContact.ts'
import { signJwt } from '../kernel/crypto/index.ts'
import { PluginStateKey, type Runtime } from '../kernel/Runtime.ts'
import { localOnly } from '../pipeline/originPolicy.ts'
import type { PipelineEnv } from '../pipeline/readJson.ts'
import { createOAuthProviders, type OAuthProviders } from './oauth/createOAuthProviders.ts'
import {
  createServiceOidc,
  SERVICE_OIDC_ISSUER,
  type ServiceOidc,
  SIGN_IN_KEY_ID,
} from './oauth/createServiceOidc.ts'
import { createDevIdp, type DevIdp } from './oauth/devIdp.ts'
import { createOtpEngine, type OtpEngine } from './otp/createOtpEngine.ts'
import { otpMac } from './otp/otpMac.ts'
import { otpStorage } from './otp/otpStorage.ts'
import { reportOtpEvents } from './otp/reportOtpEvents.ts'
import { createOutbox, type Outbox } from './outbox/createOutbox.ts'
import { timestampSequence } from './proxy/timestampSequence.ts'
import type { SignInWingConfig } from './SignInWingOptions.ts'
import { readSignInKeys, type SignInKeys } from './signInKeys.ts'

/** What the sign-in wing keeps per service (never module-wide: several services may coexist). */
export interface SignInState {
  /** What the wing was built with (`signInWing(options)`): OAuth, CAPTCHA, the proxy's budgets. */
  options: Readonly<SignInWingConfig>
  /** The sign-in key (verification tokens, service OIDC tokens) and the OTP secret, sealed. */
  keys: SignInKeys
  outbox: Outbox
  otp: OtpEngine
  devIdp: DevIdp
  oidc: ServiceOidc
  /** The OAuth providers sign-ins exchange codes with (the operator's, else the dev IdP). */
  oauth: OAuthProviders
  /** The service app, for in-process calls to its own dev identity provider. */
  app: Hono<PipelineEnv>
  /** `timestampMs` of the next call the auth proxy forwards (strictly increasing). */
  nextProxyTimestamp(): string
}

/** Where the runtime keeps the sign-in wing's state. */
export const SIGN_IN_STATE = new PluginStateKey<SignInState>('sign-in')

/** The sign-in wing's `state.load`: reads its keys (made at bootstrap) and builds its engines. */
export async function loadSignInState(
  runtime: Runtime,
  app: Hono<PipelineEnv>,
  options: SignInWingConfig,
): Promise<SignInState> {
  const { captcha, oauth } = options
  const keys = await readSignInKeys(runtime.store)
  const now = () => runtime.now()
  // Dev surfaces answer loopback clients and allowed origins only (never `Access-Control-Allow-Origin: *`).
  const outbox = createOutbox({
    guard: localOnly(runtime, { methods: ['GET', 'DELETE'], headers: ['Accept'] }),
  })
  const openKey = () => runtime.open(keys.sealedPrivateKey)
  return {
    options,
    keys,
    outbox,
    otp: reportOtpEvents(
      runtime,
      createOtpEngine({
        storage: otpStorage(runtime, options.otpCaps),
        issueToken: (claims) => {
          const privateKey = openKey()
          try {
            return signJwt(claims, privateKey, SIGN_IN_KEY_ID)
          } finally {
            privateKey.fill(0)
          }
        },
        deliver: (message) => outbox.deliver(message),
        queued: () => runtime.jobs.wake(),
        now,
        newId: () => runtime.newId(),
        mac: otpMac(runtime, keys.sealedOtpSecret),
        ...(options.smsBudget ? { smsBudget: options.smsBudget } : {}),
        // Through the index of verified contacts, one row at most: the unverified copies of a
        // number anyone may set on users of their own account are neither read nor make it known.
        knownNumber: (number) => someoneHoldsContact(runtime.store, 'phone', number),
        ...(captcha?.perContact
          ? {
              captchaSendLimit: {
                perMinute: captcha.perContact.codes,
                perWindow: captcha.perContact.codes,
                windowMinutes: captcha.perContact.windowMinutes,
              },
            }
          : {}),
      }),
    ),
    devIdp: createDevIdp({
      now,
      guard: localOnly(runtime, { methods: ['GET', 'POST'], headers: ['Content-Type', 'Accept'] }),
    }),
    oidc: createServiceOidc({
      privateKey: openKey,
      publicKey: hexToBytes(keys.publicKey),
      issuer: SERVICE_OIDC_ISSUER,
      now,
    }),
    oauth: createOAuthProviders({
      // Production serves no dev identity provider (a dev surface), so no method resolves to it:
      // `wallet_kit_config` would advertise its /dev/oidc endpoint and client id, a 404 there.
      ...(runtime.options.mode === 'production'
        ? { oauth: { ...oauth, devIdentityProvider: false } }
        : oauth
          ? { oauth }
          : {}),
      fetch: (url, init) => runtime.options.fetch(url, init),
      // The dev IdP is served by this same app: called in-process, no network.
      devFetch: (url, init) => app.request(url, init),
      now,
    }),
    app,
    nextProxyTimestamp: timestampSequence(now),
  }
}

/** The sign-in wing's state in `runtime`. */
export const signInState = (runtime: Runtime): SignInState => runtime.stateOf(SIGN_IN_STATE)
