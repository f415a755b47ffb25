import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { ServiceError } from '../kernel/base/errors.ts'
import type { SmsOptions } from './DeliveryOptions.ts'

/** One SMS as a provider gets it. */
export interface SmsMessage {
  /** The same on every try of one message: the provider's idempotency key. */
  id: string
  to: string
  body: string
}

/** An HTTP answer that is not a success, with what the queue needs to decide (no body content). */
export class ProviderError extends ServiceError {
  override name = 'ProviderError'
  constructor(readonly status: number) {
    super(`the SMS provider answered HTTP ${status}`)
  }
}

export interface SmsSender {
  provider: SmsOptions['provider']
  send(message: SmsMessage, signal: AbortSignal): Promise<void>
}

/** HMAC-SHA256 hex of `${timestamp}.${body}` under `secret`: what the webhook's receiver recomputes. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return bytesToHex(hmac(sha256, utf8ToBytes(secret), utf8ToBytes(`${timestamp}.${body}`)))
}

/**
 * The sender of `options`: Twilio's Messages API (form-encoded, basic auth, the message's id as
 * `I-Twilio-Idempotency-Token`) or the signed webhook (JSON, HMAC headers, the id as
 * `X-Latchkey-Delivery-Id`). Either way a retry of one message carries the same key, so a provider
 * that already accepted it does not send it twice.
 */
export function smsSender(options: SmsOptions, fetcher: typeof fetch, now: () => number): SmsSender {
  if (options.provider === 'twilio') {
    const base = (options.baseUrl ?? 'https://api.twilio.com').replace(/\/+$/, '')
    const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Messages.json`
    const authorization = `Basic ${btoa(`${options.accountSid}:${options.authToken}`)}`
    return {
      provider: 'twilio',
      async send(message, signal) {
        const response = await fetcher(url, {
          method: 'POST',
          headers: {
            Authorization: authorization,
            'Content-Type': 'application/x-www-form-urlencoded',
            'I-Twilio-Idempotency-Token': message.id,
          },
          body: new URLSearchParams({ To: message.to, From: options.from, Body: message.body }).toString(),
          signal,
        })
        await response.body?.cancel()
        if (!response.ok) throw new ProviderError(response.status)
      },
    }
  }
  return {
    provider: 'webhook',
    async send(message, signal) {
      const body = JSON.stringify({ id: message.id, to: message.to, body: message.body })
      const timestamp = String(Math.floor(now() / 1000))
      const response = await fetcher(options.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Latchkey-Delivery-Id': message.id,
          'X-Latchkey-Timestamp': timestamp,
          'X-Latchkey-Signature': `sha256=${webhookSignature(options.secret, timestamp, body)}`,
        },
        body,
        signal,
      })
      await response.body?.cancel()
      if (!response.ok) throw new ProviderError(response.status)
    },
  }
}
