/**
 * `@latchkey/service/testing`: one test-support module for everything that runs the service in
 * tests, stories and benches — the service in process with a movable clock, stamping keys, a
 * software passkey, and the latest code from the dev outbox.
 */
export * from './harness.ts'
