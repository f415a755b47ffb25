import { OAUTH_METHODS, type ProxySettings, SIGN_IN_METHODS } from '@latchkey/protocol'
import { DEFAULT_EMAIL_TEMPLATE, DEFAULT_SMS_TEMPLATE } from './otp/renderTemplate.ts'

/** The placeholder client id a new configuration names for `method`: no client at any real provider. */
export const devClientId = (method: string) => `latchkey-dev-${method}`

/** Settings of a new proxy configuration. */
export function defaultProxySettings(): ProxySettings {
  return {
    enabled: true,
    allowedOrigins: ['*'],
    enabledProviders: [...SIGN_IN_METHODS],
    sessionExpirationSeconds: '900',
    emailTemplate: { ...DEFAULT_EMAIL_TEMPLATE },
    smsTemplate: { ...DEFAULT_SMS_TEMPLATE },
    oauth: {
      redirectUrl: '',
      clientIds: Object.fromEntries(OAUTH_METHODS.map((m) => [m, devClientId(m)])),
    },
  }
}
