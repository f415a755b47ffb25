// Node only: the service `start` and `init` run, from a validated configuration: durable storage,
// the master key given explicitly, production mode (no dev surface, no dev organization).
import { mkdirSync } from 'node:fs'
import {
  type CreateServiceOptions,
  createService,
  DevDatabaseError,
  type Service,
  WrongMasterKeyError,
} from '../assembly/createService.ts'
import { smtpMailer } from '../delivery/smtpMailer.ts'
import { openDataDir, openPostgres } from '../kernel/store/durableStores.ts'
import { DatabaseAheadError, MigrationsPendingError } from '../kernel/store/migrations.ts'
import type { Store } from '../kernel/store/Store.ts'
import { SponsorKeyMismatchError } from '../sending/sponsors.ts'
import { nodeWebhookTransport } from '../webhooks/nodeTransport.ts'
import { cryptoWorkers } from '../workers/cryptoWorkers.ts'
import { nativeVerifyP256 } from '../workers/nativeVerify.ts'
import { ConfigError } from './ConfigError.ts'
import type { Config } from './configSchema.ts'
import { productionRefusals } from './productionRefusals.ts'
import { captchaOptions } from './sections/captcha.ts'
import { emailOptions } from './sections/email.ts'
import { limitsOptions } from './sections/limits.ts'
import { masterKeysOptions } from './sections/masterKey.ts'
import { oauthOptions } from './sections/oauth.ts'
import { otpCapsOptions } from './sections/otp.ts'
import { proxyOptions } from './sections/proxy.ts'
import { startRateLimits } from './sections/rateLimits.ts'
import { rpcOptions } from './sections/rpc.ts'
import { sendingOptions } from './sections/sending.ts'
import { smsBudgetOptions, smsOptions } from './sections/sms.ts'
import { sponsorshipOptions } from './sections/sponsorship.ts'
import { storageOptions } from './sections/storage.ts'
import { webauthnOptions } from './sections/webauthn.ts'
import { webhooksOptions } from './sections/webhooks.ts'

export interface ProductionServiceOptions {
  /** Sign in worker threads (`start`); `init` signs nothing and keeps to one thread. @default false */
  workers?: boolean
  /** Write `proxy` into the parent organization's proxy configuration (`start`). @default true */
  applyProxySettings?: boolean
  /** Refuse a database that is behind instead of migrating it (`start --no-migrate`). @default false */
  noMigrate?: boolean
  /** Open a data dir without SQLite's `quick_check` (`start --skip-integrity-check`). @default false */
  skipIntegrityCheck?: boolean
  /** Metrics and log sinks and the request logger (`observability()`'s `serviceOptions`). */
  telemetry?: Pick<CreateServiceOptions, 'events' | 'logger'>
}

/** Where the data is, for messages (never the database URL: it may hold a password). */
export function describeStorage(config: Config): string {
  const storage = storageOptions(config.storage)
  if (storage.kind === 'dataDir') return `${storage.dataDir} (SQLite)`
  if (storage.kind === 'postgres') {
    try {
      const url = new URL(storage.databaseUrl)
      return `PostgreSQL on ${url.host}${url.pathname}`
    } catch {
      return 'PostgreSQL'
    }
  }
  return 'nowhere'
}

/**
 * Opens the configured store and starts the service on it in production mode. Throws `ConfigError`
 * for anything the operator must change (a refusal, a wrong master key, a database `dev` made).
 */
export async function productionService(
  config: Config,
  options: ProductionServiceOptions = {},
): Promise<Service> {
  const refusals = productionRefusals(config)
  if (refusals.length > 0) throw new ConfigError(refusals)
  const storage = storageOptions(config.storage)
  const masterKeys = masterKeysOptions(config.master_key)
  const migrate = { migrate: options.noMigrate !== true }
  let store: Store
  if (storage.kind === 'postgres') store = await openPostgres(storage.databaseUrl, migrate)
  else if (storage.kind === 'dataDir') {
    mkdirSync(storage.dataDir, { recursive: true, mode: 0o700 })
    store = await openDataDir(storage.dataDir, {
      ...migrate,
      integrityCheck: options.skipIntegrityCheck !== true,
    })
  } else throw new ConfigError(refusals)
  try {
    return await createService({
      mode: 'production',
      store,
      masterKeys,
      ...options.telemetry,
      ...(config.email || config.sms
        ? {
            delivery: {
              ...(config.email ? { email: emailOptions(config.email) } : {}),
              ...(config.sms ? { sms: smsOptions(config.sms) } : {}),
              mailer: smtpMailer,
            },
          }
        : {}),
      ...(config.oauth ? { oauth: { ...oauthOptions(config.oauth), devIdentityProvider: false } } : {}),
      rateLimits: startRateLimits(config.rate_limits),
      ...(config.sponsorship ? { sponsorship: sponsorshipOptions(config.sponsorship) } : {}),
      ...(config.captcha ? { captcha: captchaOptions(config.captcha) } : {}),
      ...(config.sms ? { smsBudget: smsBudgetOptions(config.sms) } : {}),
      ...(config.otp ? otpCapsOptions(config.otp) : {}),
      rpc: rpcOptions(config.rpc),
      sending: sendingOptions(config.sending),
      webhooks: { ...webhooksOptions(config.webhooks), transport: nodeWebhookTransport() },
      limits: limitsOptions(config.limits),
      ...(options.workers ? { crypto: cryptoWorkers() } : {}),
      verifyP256: nativeVerifyP256,
      webauthn: webauthnOptions(config.webauthn, {
        publicUrl: config.server.public_url,
        allowedOrigins: config.proxy.allowed_origins,
      }),
      ...(options.applyProxySettings === false ? {} : { proxySettings: proxyOptions(config.proxy) }),
    })
  } catch (error) {
    await store.close()
    if (error instanceof WrongMasterKeyError) throw new ConfigError([`master_key.key: ${error.message}`])
    if (error instanceof MigrationsPendingError || error instanceof DatabaseAheadError)
      throw new ConfigError([`storage: ${error.message}`])
    if (error instanceof DevDatabaseError) throw new ConfigError([`storage: ${error.message}`])
    if (error instanceof SponsorKeyMismatchError) throw new ConfigError([error.message])
    throw error
  }
}
