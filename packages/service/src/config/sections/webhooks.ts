import { z } from 'zod'
import { parseAllowList } from '../../webhooks/addressPolicy.ts'
import { MAX_WAITING_DEFAULT } from '../../webhooks/capBacklog.ts'
import type { WebhooksOptions } from '../../webhooks/WebhooksOptions.ts'

/**
 * `[webhooks]`: signed webhook delivery (docs/webhooks.md). Deliveries are always sent in
 * production (`start`), only `https` to public addresses unless an address is in `allow_list`.
 * Absent: the defaults below.
 */
export const webhooksSection = z
  .object({
    retry_window_hours: z
      .number()
      .min(0.01)
      .max(24 * 7)
      .default(24)
      .describe('How long a delivery is retried (exponential backoff) before it fails for good, in hours.'),
    pause_threshold: z
      .int({ error: 'must be a whole number of failures from 1 to 1000' })
      .min(1, { error: 'must be a whole number of failures from 1 to 1000' })
      .max(1000, { error: 'must be a whole number of failures from 1 to 1000' })
      .default(20)
      .describe(
        'Failed tries in a row after which an endpoint is paused (resumed by update_webhook_endpoint isActive: true).',
      ),
    allow_list: z
      .array(z.string().min(1).max(100))
      .max(100)
      .default([])
      .superRefine((entries, context) => {
        try {
          parseAllowList(entries)
        } catch (error) {
          context.addIssue({ code: 'custom', message: (error as Error).message })
        }
      })
      .describe(
        "CIDRs or addresses of internal receivers the operator's own organizations' endpoints (top-level organizations) may reach although not public, e.g. ['10.20.0.0/16']; never a sub-organization's (an end user's): its endpoints are judged as if the list were empty, at creation and at every delivery. Everything else private, loopback, link-local or CGNAT is refused.",
      ),
    connect_timeout_ms: z.int().min(100).max(30_000).default(5000).describe('Connect timeout of one try.'),
    timeout_ms: z
      .int()
      .min(100)
      .max(60_000)
      .default(10_000)
      .describe('Timeout of one whole try (connect, send, answer).'),
    busy_delay_ms: z
      .int({ error: 'must be a whole number of milliseconds from 0 to 10000' })
      .min(0, { error: 'must be a whole number of milliseconds from 0 to 10000' })
      .max(10_000, { error: 'must be a whole number of milliseconds from 0 to 10000' })
      .default(10_000)
      .describe(
        'How long a delivery may wait while the service is busy serving requests: it is sent once the service is quiet or once it is this old (0: at once).',
      ),
    retention_days: z
      .number()
      .min(0.01)
      .max(3650)
      .default(7)
      .describe(
        'How long settled deliveries (delivered, failed) are kept, in days; a delivery still being sent or retried is never deleted.',
      ),
    retention_per_endpoint: z
      .int({ error: 'must be a whole number of deliveries from 1 to 10000000' })
      .min(1, { error: 'must be a whole number of deliveries from 1 to 10000000' })
      .max(10_000_000, { error: 'must be a whole number of deliveries from 1 to 10000000' })
      .default(10_000)
      .describe('Settled deliveries kept per endpoint at most (the oldest go first).'),
    max_waiting_per_endpoint: z
      .int({ error: 'must be a whole number of deliveries from 1 to 10000000' })
      .min(1, { error: 'must be a whole number of deliveries from 1 to 10000000' })
      .max(10_000_000, { error: 'must be a whole number of deliveries from 1 to 10000000' })
      .default(MAX_WAITING_DEFAULT)
      .describe(
        'Deliveries that may wait on one endpoint at most (pending, or paused while it is turned off or paused): past it the oldest are dropped (listed failed, lastError backlog_full) and the newest kept.',
      ),
  })
  .strict()
  .describe(
    'Signed webhooks: retries, pausing, internal receivers, how many deliveries may wait and how long they are kept.',
  )

export type WebhooksSection = z.infer<typeof webhooksSection>

/** The parsed `[webhooks]` section as `CreateServiceOptions.webhooks` (the transport is the caller's). */
export function webhooksOptions(parsed: WebhooksSection): WebhooksOptions {
  return {
    retryWindowMs: Math.round(parsed.retry_window_hours * 60 * 60_000),
    pauseThreshold: parsed.pause_threshold,
    allowList: parsed.allow_list,
    connectTimeoutMs: parsed.connect_timeout_ms,
    timeoutMs: parsed.timeout_ms,
    busyDelayMs: parsed.busy_delay_ms,
    retention: {
      maxAgeMs: Math.round(parsed.retention_days * 24 * 60 * 60_000),
      maxPerEndpoint: parsed.retention_per_endpoint,
    },
    maxWaitingPerEndpoint: parsed.max_waiting_per_endpoint,
  }
}
