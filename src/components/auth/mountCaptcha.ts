// Loaded by a dynamic import from `CaptchaField` only when the proxy configuration enables a
// CAPTCHA: an app without one never downloads this module nor the provider's script.

export type CaptchaProvider = 'turnstile' | 'hcaptcha'

/**
 * The part of the explicit-render API that Cloudflare Turnstile (`window.turnstile`) and hCaptcha
 * (`window.hcaptcha`) share: `render` returns the widget's id, which `reset` and `remove` take.
 */
export interface CaptchaApi {
  render(container: HTMLElement, parameters: Record<string, unknown>): string | number | undefined
  reset(widgetId?: string | number): void
  remove(widgetId: string | number): void
}

declare global {
  interface Window {
    turnstile?: CaptchaApi
    hcaptcha?: CaptchaApi
  }
}

/** Each provider's script, in explicit-render mode (the kit decides where and when it renders). */
export const CAPTCHA_SCRIPTS: Record<CaptchaProvider, string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit',
  hcaptcha: 'https://js.hcaptcha.com/1/api.js?render=explicit',
}

// Narrowest container the full-size widgets fit (Turnstile 300 px, hCaptcha 303 px); a narrower
// one gets the compact widget, so nothing overflows a 320 px screen.
const FULL_WIDTH = 303

// One script per page and provider, shared by every widget; a failed load is forgotten so that
// "Try again" injects it anew.
const loading = new Map<CaptchaProvider, Promise<CaptchaApi>>()

/** The provider's global, injecting its script once per page unless the app already loaded it. */
export function loadCaptchaApi(provider: CaptchaProvider): Promise<CaptchaApi> {
  const ready = window[provider]
  if (ready) return Promise.resolve(ready)
  let promise = loading.get(provider)
  if (!promise) {
    promise = new Promise<CaptchaApi>((resolve, reject) => {
      const script = document.createElement('script')
      script.src = CAPTCHA_SCRIPTS[provider]
      script.async = true
      script.onload = script.onerror = () => {
        const api = window[provider]
        if (api) return resolve(api)
        loading.delete(provider)
        script.remove()
        reject(new Error(`${script.src} did not load`))
      }
      document.head.append(script)
    })
    loading.set(provider, promise)
  }
  return promise
}

export interface MountCaptchaOptions {
  provider: CaptchaProvider
  siteKey: string
  /** The kit's theme; `system` follows the page's colour scheme. */
  theme: 'light' | 'dark' | 'system'
  /** A solved check's token, or `null` once it expired or failed. */
  onToken(token: string | null): void
  onError(error: unknown): void
}

/** A rendered widget. */
export interface CaptchaHandle {
  /** Asks for a new check (tokens are single-use). */
  reset(): void
  remove(): void
}

/** Renders the provider's widget into `container` (loading its script first if needed). */
export async function mountCaptcha(
  container: HTMLElement,
  options: MountCaptchaOptions,
): Promise<CaptchaHandle> {
  const { provider, theme, onToken, onError } = options
  const api = await loadCaptchaApi(provider)
  const dark =
    theme === 'dark' || (theme === 'system' && window.matchMedia?.('(prefers-color-scheme: dark)').matches)
  const narrow = container.clientWidth > 0 && container.clientWidth < FULL_WIDTH
  const id = api.render(container, {
    sitekey: options.siteKey,
    theme: dark ? 'dark' : 'light',
    // Turnstile's flexible widget fills the field's width (300 px at least); below that, compact.
    size: narrow ? 'compact' : provider === 'turnstile' ? 'flexible' : 'normal',
    callback: (token: string) => onToken(token),
    'expired-callback': () => onToken(null),
    'error-callback': (code?: unknown) => {
      onToken(null)
      onError(code)
    },
  })
  return {
    reset: () => api.reset(id ?? undefined),
    remove: () => {
      if (id !== undefined) api.remove(id)
    },
  }
}
