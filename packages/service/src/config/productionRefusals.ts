import { OAUTH_METHODS } from '@latchkey/protocol'
import type { Config } from './configSchema.ts'

/**
 * Why `start` (and `init`) will not run on this configuration, one line per reason naming the
 * key: each is a way a production service would be unsafe (data lost on restart, a master key
 * nobody kept, any web page driving the auth proxy, a development surface).
 */
export function productionRefusals(config: Config): string[] {
  const refusals: string[] = []
  if (config.storage.database_url === undefined && config.storage.data_dir === undefined)
    refusals.push(
      'storage: start needs durable storage: set storage.database_url (PostgreSQL) or storage.data_dir (SQLite); it never keeps data in memory',
    )
  if (config.master_key.key === undefined)
    refusals.push(
      'master_key.key: start needs the master key given explicitly: master_key.key_file = "/etc/latchkey/master.key" or LATCHKEY_MASTER_KEY (64 hex characters, e.g. from `openssl rand -hex 32`); start never creates one',
    )
  const origins = config.proxy.allowed_origins
  if (origins === undefined)
    refusals.push(
      'proxy.allowed_origins: list the origins of your apps (e.g. ["https://app.example.com"]); without it any web page could use the auth proxy',
    )
  else if (origins.includes('*'))
    refusals.push(
      'proxy.allowed_origins: "*" lets any web page use the auth proxy; list the origins of your apps instead',
    )
  // Without a real provider these methods sign in through the dev identity provider, a dev surface.
  const configured = new Set(
    Object.entries(config.oauth ?? {})
      .filter(([method, provider]) => (OAUTH_METHODS as readonly string[]).includes(method) && provider)
      .map(([method]) => method),
  )
  const devOauth = config.proxy.enabled_methods.filter(
    (method) => (OAUTH_METHODS as readonly string[]).includes(method) && !configured.has(method),
  )
  if (devOauth.length > 0)
    refusals.push(
      `proxy.enabled_methods: ${devOauth.join(', ')} would sign in through the dev identity provider, which start does not serve; configure the provider under [oauth.${devOauth[0]}] or remove it`,
    )
  // Without a provider a code would go to the dev outbox, which start does not serve: lost.
  if (config.proxy.enabled_methods.includes('email') && config.email === undefined)
    refusals.push(
      'proxy.enabled_methods: email needs an SMTP server to send its codes: configure [email] (host, from, …) or remove email',
    )
  if (config.proxy.enabled_methods.includes('sms') && config.sms === undefined)
    refusals.push(
      'proxy.enabled_methods: sms needs an SMS provider to send its codes: configure [sms] (twilio or webhook) or remove sms',
    )
  return refusals
}
