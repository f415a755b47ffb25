/**
 * What the service reports about itself as it runs: each subsystem emits named events with a small
 * payload (`runtime.emit('otp.sent', { channel: 'email' })`), and sinks (metrics, logs) turn them
 * into what operators read. A payload holds bounded values only: never a secret, code, token, key
 * or full contact address, and no ids where a sink could turn them into metric labels.
 *
 * Add the events of a subsystem to `ServiceEventMap` (name → payload); sinks see every event.
 */
export interface ServiceEventMap {
  // ---- sending (sending/*) ----
  /** A send was signed and committed with its broadcast job. */
  'send.signed': { chain: 'eip155' | 'solana'; sponsored: boolean; calls: number }
  /** A sponsored send was refused by a gas cap before signing. */
  'send.capExceeded': { cap: string }
  /** A node accepted a broadcast. */
  'send.broadcast': { chain: 'eip155' | 'solana'; attempt: number }
  /** The node could not be reached; the send stays pending and is retried. */
  'send.rpcUnreachable': { chain: 'eip155' | 'solana'; phase: 'broadcast' | 'track' }
  /** A send reached a final status; `ms` from commit to that status. */
  'send.final': { chain: 'eip155' | 'solana'; status: 'INCLUDED' | 'FAILED' | 'CANCELLED'; ms: number }
  /** A stuck send was re-signed with higher fees (same nonce). */
  'send.replaced': { chain: 'eip155'; replacement: number }
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
