import { OAUTH_METHODS } from '@latchkey/protocol'
import type { Config } from './configSchema.ts'
import { webauthnOptions } from './sections/webauthn.ts'

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
  // The runtime reads no passkey origins as "any origin" (the dev service's): a passkey used on any
  // page of the relying party's domain (another subdomain, user content) would register and sign.
  // Said once: where the line above refuses proxy.allowed_origins, listing the apps there fixes both.
  const proxyRefused = origins === undefined || origins.includes('*')
  if (!proxyRefused && webauthnOptions(config.webauthn, { allowedOrigins: origins }).origins === undefined)
    refusals.push(
      'webauthn.origins: no origin is left to accept in passkey client data, so passkeys would be accepted from any page; list the origins of your apps in webauthn.origins or proxy.allowed_origins (e.g. ["https://app.example.com"])',
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
  // Every SMS code is a paid message to a number the caller chooses (SMS pumping).
  if (config.sms !== undefined && config.sms.max_per_hour === undefined)
    refusals.push(
      'sms.max_per_hour: anyone can ask an SMS code for any number they choose, and each costs you a message (SMS pumping sends them to premium-rate numbers, a different one each time); set how many the service may send an hour, all instances together (e.g. 200), and allowed_countries to where your users are',
    )
  refusals.push(...sponsorshipRefusals(config))
  return refusals
}

/**
 * With sponsorship on, every end user (anyone who signs up) spends the sponsor's money: without a
 * monthly bound on what one organization's sends cost, what they may spend together is the
 * sponsor's whole balance. Each set of caps that applies (`caps`, and every `organization_caps`
 * entry, which replaces it) must bound the chains it pays on: EVM chains (`delegates`) by
 * `per_organization_per_month_wei` or `per_organization_per_month` (gas, at most the fee ceiling
 * each), Solana chains of `[rpc]` by `per_organization_per_month_lamports`.
 */
function sponsorshipRefusals(config: Config): string[] {
  const sponsorship = config.sponsorship
  if (sponsorship === undefined) return []
  const evm = Object.keys(sponsorship.delegates)
  const solana = Object.keys(config.rpc).filter((caip2) => caip2.startsWith('solana:'))
  const sets = [
    ['sponsorship.caps', sponsorship.caps] as const,
    ...Object.entries(sponsorship.organization_caps).map(
      ([id, caps]) => [`sponsorship.organization_caps.${id}`, caps] as const,
    ),
  ]
  const refusals: string[] = []
  for (const [key, caps] of sets) {
    if (
      evm.length > 0 &&
      caps.per_organization_per_month_wei === undefined &&
      caps.per_organization_per_month === undefined
    )
      refusals.push(
        `${key}.per_organization_per_month_wei: sponsored sends on ${evm.join(', ')} have no monthly bound, so end users together could spend the sponsor's whole balance; set what the sponsor may pay a month in wei (e.g. "1000000000000000000", 1 ETH), and per_user_per_day_wei for what one end user may`,
      )
    if (solana.length > 0 && caps.per_organization_per_month_lamports === undefined)
      refusals.push(
        `${key}.per_organization_per_month_lamports: sponsored sends on ${solana.join(', ')} have no monthly bound, so end users together could spend the fee payer's whole balance; set what it may pay a month in lamports (e.g. 1000000000, 1 SOL), and per_user_per_day_lamports for what one end user may`,
      )
  }
  return refusals
}
