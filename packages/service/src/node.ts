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
} from './store/durableStores.ts'
export { type DataDirLock, lockDataDir } from './store/lockDataDir.ts'
export { type CryptoWorkersOptions, cryptoWorkers } from './workers/cryptoWorkers.ts'
export { nativeVerifyP256 } from './workers/nativeVerify.ts'
