/**
 * `@latchkey/service/testing`: one test-support module for everything that runs the service in
 * tests, stories and benches — the service in process with the client configuration that reaches
 * it, the latest code from the dev outbox, a software passkey behind `navigator.credentials`, and
 * (for the service's own tests) a harness with a movable clock and stamping keys.
 */
export * from './harness.ts'
export { latestCode } from './latestCode.ts'
export { installSoftAuthenticator, type SoftAuthenticator } from './softAuthenticator.ts'
export { createTestService, TEST_SERVICE_URL, type TestClientConfig } from './testService.ts'
export { DEAD_ADDRESS, type UnsignedTransferOptions, unsignedTransfer } from './unsignedTransfer.ts'
