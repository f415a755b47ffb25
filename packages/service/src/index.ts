/** `@latchkey/service`: the local service as a fetch handler (Node and browser). */

export type { DevCredentials, DevOptions } from './bootstrap.ts'
export {
  type CreateServiceOptions,
  createService,
  type Service,
  WrongMasterKeyError,
} from './createService.ts'
export { ApiError } from './errors.ts'
export type { EventSink, ServiceEventMap, ServiceEventName } from './observability/events.ts'
export type { ReadinessReport } from './observability/Readiness.ts'
export type { ServiceLogger } from './observability/ServiceLogger.ts'
export {
  type Clock,
  PluginStateKey,
  type Runtime,
  type StampVerifier,
  type WebAuthnOptions,
} from './Runtime.ts'
export type {
  ActivityContext,
  ActivityHandler,
  ActivityHandlers,
  Caller,
  QueryContext,
  QueryHandler,
  ServicePlugin,
} from './registry.ts'
export { defineActivity, defineQuery } from './registry.ts'
export type { DrainHook, Lifecycle } from './server/Lifecycle.ts'
export { type MemoryStoreOptions, openMemoryStore } from './store/memory.ts'
export { type Reads, Store, Transaction } from './store/Store.ts'
