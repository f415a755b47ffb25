import { AbortedError, fromErrorBody, LatchkeyError, NetworkError, TimeoutError } from '../errors.ts'

export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface HttpRequestParameters {
  url: string
  /** The exact body bytes (stamps sign them, so the caller serialises once). */
  body: string
  headers?: Record<string, string>
  fetch: FetchFn
  /** @default 30_000 */
  timeoutMs?: number
  signal?: AbortSignal | undefined
}

/**
 * POSTs a JSON body and returns the parsed JSON answer. Every failure becomes a
 * `LatchkeyError`: the service's `{ code, message, details }` a `ServiceError` with its code,
 * transport failures `NetworkError`, `TimeoutError` or `AbortedError`.
 */
export async function httpRequest<T>({
  url,
  body,
  headers,
  fetch,
  timeoutMs = 30_000,
  signal,
}: HttpRequestParameters): Promise<T> {
  if (signal?.aborted) throw new AbortedError(signal.reason)
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, timeoutMs)
  const onAbort = () => controller.abort()
  signal?.addEventListener('abort', onAbort, { once: true })
  try {
    let response: Response
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
        body,
        signal: controller.signal,
      })
    } catch (error) {
      if (timedOut) throw new TimeoutError(url, timeoutMs)
      if (signal?.aborted) throw new AbortedError(signal.reason)
      throw new NetworkError(url, error)
    }
    let text: string
    try {
      text = await response.text()
    } catch (error) {
      if (timedOut) throw new TimeoutError(url, timeoutMs)
      if (signal?.aborted) throw new AbortedError(signal.reason)
      throw new NetworkError(url, error)
    }
    let json: unknown
    try {
      json = text ? JSON.parse(text) : {}
    } catch (error) {
      if (!response.ok) throw fromErrorBody(undefined, response.status)
      throw new LatchkeyError(`The service answered ${url} with a body that is not JSON`, {
        code: 'INTERNAL',
        status: response.status,
        cause: error,
      })
    }
    if (!response.ok) throw fromErrorBody(json, response.status)
    return json as T
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
  }
}
