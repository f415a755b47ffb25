import {
  ACTIVITIES,
  type ActivityPath,
  ATTESTED_STAMP_HEADER,
  QUERIES,
  type QueryPath,
} from '@latchkey/protocol'
import { ATTESTED_CREDENTIAL_PREFIX, SESSION_LOCK_PATHS, sessionLockOf } from '../domain/sessions.ts'
import { PermissionError } from '../kernel/base/errors.ts'
import { CONTACT_CODES } from '../kernel/contactCodes.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { initOtp } from './activities/initOtp.ts'
import { oauth2Authenticate } from './activities/oauth2Authenticate.ts'
import { oauthLogin } from './activities/oauthLogin.ts'
import { otpLogin } from './activities/otpLogin.ts'
import { stampLogin } from './activities/stampLogin.ts'
import { verifyOtp } from './activities/verifyOtp.ts'
import { verifyAttestedStamp } from './attested/verifyAttestedStamp.ts'
import { contactCodesOf } from './contactCodes.ts'
import { DEV_OIDC_PREFIX } from './oauth/devIdp.ts'
import { outboxRoutes } from './outbox/createOutbox.ts'
import { proxyApp } from './proxy/proxyApp.ts'
import { bootstrapDevProxyConfig, pruneSignInRows } from './proxyConfig.ts'
import type { SignInWingConfig } from './SignInWingOptions.ts'
import { settingsApp } from './settings/settingsApp.ts'
import { bootstrapSignInKeys } from './signInKeys.ts'
import { loadSignInState, SIGN_IN_STATE, type SignInState, signInState } from './signInState.ts'
import { subOrganizationHooks } from './subOrganizationHooks.ts'

/**
 * Everything that signs a person in: the auth proxy (`/v1/*`), the OTP and OAuth activities,
 * the sign-up hooks of `create_sub_organization`, and in dev mode only the dev outbox
 * (`/dev/outbox`), the dev OIDC identity provider (`/dev/oidc/<provider>/…`) and the operator
 * settings (`/dev/settings/*`). Its state keeps `options` (OAuth providers, CAPTCHA, the auth
 * proxy's per-address budget), which its handlers read with `signInState(runtime).options`.
 */
export const signInWing = (options: SignInWingConfig = {}): ServicePlugin<SignInState> => ({
  name: 'sign-in',
  activities: {
    init_otp: initOtp,
    verify_otp: verifyOtp,
    otp_login: otpLogin,
    oauth2_authenticate: oauth2Authenticate,
    oauth_login: oauthLogin,
    stamp_login: stampLogin,
  },
  state: {
    key: SIGN_IN_STATE,
    async load(runtime, app) {
      const state = await loadSignInState(runtime, app, options)
      // Other wings send and check codes through the kernel's contract (the MFA wing's factors).
      runtime.keepState(CONTACT_CODES, contactCodesOf(runtime, state.otp))
      return state
    },
  },
  stampVerifiers: { [ATTESTED_STAMP_HEADER]: verifyAttestedStamp },
  async bootstrap(tx, runtime) {
    await bootstrapSignInKeys(tx, runtime)
    await bootstrapDevProxyConfig(tx, runtime)
    await pruneSignInRows(tx, runtime)
  },
  routes(app, runtime) {
    const state = signInState(runtime)
    app.route('/v1', proxyApp(app, runtime))
    // The outbox, the dev identity provider and the settings routes are dev surfaces.
    if (runtime.options.mode === 'production') return
    app.route('/dev', outboxRoutes(state.outbox))
    if (state.oauth.devIdentityProvider) app.route(DEV_OIDC_PREFIX, state.devIdp.app)
    app.route('/dev/settings', settingsApp(runtime))
  },
  subOrganization: subOrganizationHooks,
  // A renewal and the logout that ends its sign-in queue for one lock (domain/sessions.ts).
  serializes: ({ path, organization }) =>
    SESSION_LOCK_PATHS.has(path) ? sessionLockOf(organization.id) : undefined,
  async ownsCaller(caller, runtime, reads = runtime.store) {
    const config = (await reads.findBy('proxyConfigs', 'organizationId', caller.organizationId))[0]
    return config?.proxyUserId !== undefined && config.proxyUserId === caller.userId
  },
  // The proxy's configuration, which `authorize` and `vouchesFor` read on every request.
  lookups: (organizationId) => [{ table: 'proxyConfigs', field: 'organizationId', value: organizationId }],
  async vouchesFor({ path, caller, organization, reads }) {
    if (!ACTIVITIES[path as ActivityPath]?.proxyUser) return false
    const config = (await reads.findBy('proxyConfigs', 'organizationId', organization.id))[0]
    return config?.proxyUserId === caller.userId
  },
  async authorize({ kind, path, caller, organization, reads }) {
    // A token vouches for a key to log in with, nothing else.
    if (
      caller.credential.id.startsWith(ATTESTED_CREDENTIAL_PREFIX) &&
      !(kind === 'activity' && path === 'stamp_login')
    )
      throw new PermissionError({
        message: `an ${ATTESTED_STAMP_HEADER} stamp only logs in (stamp_login), not ${path}`,
      })
    // Only proxy users are confined here; everyone else passes.
    const config = (await reads.findBy('proxyConfigs', 'organizationId', caller.organizationId))[0]
    if (!config || config.proxyUserId !== caller.userId) return
    const allowed =
      kind === 'activity'
        ? ACTIVITIES[path as ActivityPath]?.proxyUser
        : QUERIES[path as QueryPath]?.proxyUser
    if (!allowed)
      throw new PermissionError({
        message: `the auth proxy's key may not ${kind === 'activity' ? 'submit' : 'query'} ${path} (organization ${organization.id})`,
      })
  },
})
