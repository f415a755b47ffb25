import { type CaptchaOptions, SITEVERIFY_URLS } from './CaptchaOptions.ts'

/** Longest token either provider issues is about 2 KB; anything longer is not one. */
const MAX_TOKEN_LENGTH = 4096

/**
 * Asks the provider's siteverify endpoint whether `token` is a passed challenge for this site:
 * form-encoded `secret`, `response`, `remoteip` (and hCaptcha's `sitekey`), answered with
 * `{ success }`. Any failure to get a clear yes (network, timeout, a non-JSON answer) is a no:
 * the request then falls back to the ordinary budgets, it is never refused for it.
 */
export async function verifyCaptcha(
  options: CaptchaOptions,
  token: string,
  remoteIp: string | undefined,
  fetchImpl: typeof fetch = fetch,
): Promise<boolean> {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return false
  const form = new URLSearchParams({ secret: options.secret, response: token })
  if (remoteIp !== undefined) form.set('remoteip', remoteIp)
  if (options.provider === 'hcaptcha') form.set('sitekey', options.siteKey)
  try {
    const res = await fetchImpl(options.verifyUrl ?? SITEVERIFY_URLS[options.provider], {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
    })
    if (!res.ok) return false
    const body = (await res.json()) as { success?: unknown }
    return body.success === true
  } catch {
    return false
  }
}
