/**
 * What the service reports about itself as it runs: each subsystem emits named events with a small
 * payload (`runtime.emit('otp.sent', { channel: 'email' })`), and sinks (metrics, logs) turn them
 * into what operators read. A payload holds bounded values only: never a secret, code, token, key
 * or full contact address, and no ids where a sink could turn them into metric labels.
 *
 * Add the events of a subsystem to `ServiceEventMap` (name → payload); sinks see every event.
 */
export interface ServiceEventMap {
  // Master-key rotation
  /** This instance seals new secrets under master-key `version` from now on (a rotation activated it). */
  'masterKey.sealing': { version: number }
}

export type ServiceEventName = keyof ServiceEventMap

/** Receives every event the service emits; must not throw and must not block. */
export interface EventSink {
  emit<K extends ServiceEventName>(name: K, data: ServiceEventMap[K]): void
}

/** A sink that drops everything (the default). */
export const silentSink: EventSink = { emit: () => undefined }

/** Several sinks as one: each gets every event; one that throws does not stop the others. */
export function fanOut(sinks: readonly EventSink[]): EventSink {
  if (sinks.length === 0) return silentSink
  if (sinks.length === 1) return sinks[0]!
  return {
    emit(name, data) {
      for (const sink of sinks)
        try {
          sink.emit(name, data)
        } catch {
          // A sink's failure is its own; the request it reports on goes on.
        }
    },
  }
}
