// `@latchkey/service/node`: the durable stores and the master key, for Node only (the main entry
// also runs in a browser).
export { smtpMailer } from './delivery/smtpMailer.ts'
export {
  DATABASE_FILE,
  loadMasterKey,
  loadMasterKeyFile,
  type OpenDataDirOptions,
  openDataDir,
  openPostgres,
} from './kernel/store/durableStores.ts'
export { type DataDirLock, lockDataDir } from './kernel/store/lockDataDir.ts'
export {
  createLogger,
  type LogFormat,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  logSink,
} from './observability/logger.ts'
export { createMetrics, type Metrics, type MetricsOptions } from './observability/metrics.ts'
export { observability } from './observability/observability.ts'
export {
  DEFAULT_DRAIN_SECONDS,
  ListenError,
  type RunningServer,
  type RunServerOptions,
  runServer,
} from './server/runServer.ts'
export {
  type NodeWebhookTransportOptions,
  nodeWebhookTransport,
  type WebhookResolver,
} from './webhooks/nodeTransport.ts'
export { type CryptoWorkersOptions, cryptoWorkers } from './workers/cryptoWorkers.ts'
export { nativeVerifyP256 } from './workers/nativeVerify.ts'
