import { initOtp } from '../activities/initOtp.ts'
import { oauth2Authenticate } from '../activities/oauth2Authenticate.ts'
import { oauthLogin } from '../activities/oauthLogin.ts'
import { otpLogin } from '../activities/otpLogin.ts'
import { verifyOtp } from '../activities/verifyOtp.ts'
import { outboxRoutes } from '../dev/createOutbox.ts'
import { DEV_OIDC_PREFIX } from '../oauth/devIdp.ts'
import type { ServicePlugin } from '../registry.ts'
import { settingsRoutes } from '../settings/settingsRoutes.ts'
import { bootstrapDevProxyConfig } from './proxyConfig.ts'
import { proxyRoutes } from './proxyRoutes.ts'
import { bootstrapSignInKey, signInState } from './signInState.ts'
import { subOrganizationHooks } from './subOrganizationHooks.ts'

/**
 * Everything that signs a person in: the auth proxy (`/v1/*`), the OTP and OAuth activities,
 * the sign-up hooks of `create_sub_organization`, the dev outbox (`/dev/outbox`), the dev OIDC
 * identity provider (`/dev/oidc/<provider>/…`) and the operator settings (`/dev/settings/*`).
 */
export const signInPlugin: ServicePlugin = {
  name: 'sign-in',
  activities: {
    init_otp: initOtp,
    verify_otp: verifyOtp,
    otp_login: otpLogin,
    oauth2_authenticate: oauth2Authenticate,
    oauth_login: oauthLogin,
  },
  bootstrap(tx, service) {
    bootstrapSignInKey(tx, service)
    bootstrapDevProxyConfig(tx, service)
  },
  routes(app, service) {
    const state = signInState(service)
    state.app = app
    proxyRoutes(app, service)
    app.route('/dev', outboxRoutes(state.outbox))
    app.route(DEV_OIDC_PREFIX, state.devIdp.app)
    settingsRoutes(app, service)
  },
  subOrganization: subOrganizationHooks,
}
