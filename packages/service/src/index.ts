/** `@latchkey/service`: the local service as a fetch handler (Node and browser). */

export type { DevCredentials, DevOptions } from './assembly/bootstrap.ts'
export {
  type CreateServiceOptions,
  createService,
  type Service,
  WrongMasterKeyError,
} from './assembly/createService.ts'
export {
  ApiError,
  type ApiErrorType,
  AuthenticationError,
  type AuthenticationErrorType,
  ConflictError,
  type ConflictErrorType,
  CredentialError,
  type CredentialErrorType,
  type DomainErrorParameters,
  FieldError,
  type FieldErrorType,
  InternalError,
  type InternalErrorType,
  LimitError,
  type LimitErrorType,
  NotConfiguredError,
  type NotConfiguredErrorType,
  NotFoundError,
  type NotFoundErrorType,
  PermissionError,
  type PermissionErrorType,
  ServiceError,
  type ServiceErrorType,
  UnavailableError,
  type UnavailableErrorType,
} from './kernel/base/errors.ts'
export type { EventSink, ServiceEventMap, ServiceEventName } from './kernel/base/events.ts'
export type { ServiceLogger } from './kernel/base/ServiceLogger.ts'
export type { DrainHook, Lifecycle } from './kernel/Lifecycle.ts'
export {
  type Clock,
  PluginStateKey,
  type Runtime,
  type StampVerifier,
  type WebAuthnOptions,
} from './kernel/Runtime.ts'
export type {
  ActivityContext,
  ActivityHandler,
  ActivityHandlers,
  Caller,
  QueryContext,
  QueryHandler,
  ServicePlugin,
} from './kernel/registry.ts'
export { defineActivity, defineQuery } from './kernel/registry.ts'
export { type MemoryStoreOptions, openMemoryStore } from './kernel/store/memory.ts'
export { type Reads, Store, Transaction } from './kernel/store/Store.ts'
export type { ReadinessReport } from './observability/Readiness.ts'
export type { ChainSender, SendContext } from './sending/ChainSender.ts'
export type { GasCaps, SendingOptions, SponsorshipOptions } from './sending/SendingOptions.ts'
export { type SendingWingOptions, sendingWing } from './sending/sendingWing.ts'
