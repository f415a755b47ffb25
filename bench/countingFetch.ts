import type { Service } from '@latchkey/service'

export interface CountedCall {
  /** `otp_init` (auth proxy), `submit/sign_raw_payloads`, `query/list_wallets`… */
  path: string
  start: number
  end: number
}

/** Wraps a fetch and records every request it makes, with start and end times. */
export function countingFetch(inner: Service['fetch']) {
  const calls: CountedCall[] = []
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    const start = performance.now()
    try {
      return await inner(input, init)
    } finally {
      calls.push({
        path: url.pathname.replace(/^\/(public\/)?v1\//, ''),
        start,
        end: performance.now(),
      })
    }
  }
  return { fetch, calls }
}
