import { en, type MessageKey, type Messages } from './en.ts'

/** Locales shipped with the kit. Others fall back to English (override strings with `messages`). */
export const BUILT_IN_LOCALES = ['en', 'es', 'ar'] as const
export type BuiltInLocale = (typeof BUILT_IN_LOCALES)[number]

/** React 19's `use()` reads `status`/`value` off a thenable, so a loaded dictionary never suspends again. */
type Tracked<T> = Promise<T> & { status?: 'pending' | 'fulfilled' | 'rejected'; value?: T }

// Non-English dictionaries are loaded on demand so an English-only app never downloads them.
const loaders: Record<Exclude<BuiltInLocale, 'en'>, () => Promise<Messages>> = {
  es: () => import('./es.ts').then((m) => m.es),
  ar: () => import('./ar.ts').then((m) => m.ar),
}

// A cache of immutable, static data (never per-user state), shared by every provider on the page.
const loaded = new Map<string, Tracked<Messages>>()

const RTL_LANGUAGES = new Set(['ar', 'fa', 'he', 'iw', 'ps', 'ur', 'yi', 'dv', 'ckb', 'sd', 'ug'])

/** The language subtag of a BCP-47 tag: `es-MX` → `es`. */
export const languageOf = (locale: string): string => locale.toLowerCase().split(/[-_]/)[0] ?? 'en'

/** Writing direction of a locale. */
export const directionOf = (locale: string): 'ltr' | 'rtl' =>
  RTL_LANGUAGES.has(languageOf(locale)) ? 'rtl' : 'ltr'

/**
 * The dictionary for `locale`: English synchronously, a built-in locale as a promise that React's
 * `use()` can suspend on (resolved promises are tracked, so later renders are synchronous).
 */
export function loadMessages(locale: string): Messages | Tracked<Messages> {
  const lang = languageOf(locale)
  if (!(lang in loaders)) return en
  let promise = loaded.get(lang)
  if (!promise) {
    promise = loaders[lang as keyof typeof loaders]() as Tracked<Messages>
    promise.status = 'pending'
    promise.then(
      (value) => {
        promise!.status = 'fulfilled'
        promise!.value = value
      },
      () => {
        promise!.status = 'rejected'
      },
    )
    loaded.set(lang, promise)
  }
  return promise
}

/**
 * Loads a built-in dictionary ahead of rendering (e.g. before hydration) so the first render in
 * that locale does not suspend.
 */
export async function preloadMessages(locale: string): Promise<Messages> {
  return loadMessages(locale)
}

export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string

/** A translate function over a dictionary plus app overrides. Unknown `{name}` markers stay as typed. */
export function createTranslate(messages: Messages, overrides?: Partial<Messages>): Translate {
  return (key, values) => {
    const template = overrides?.[key] ?? messages[key] ?? en[key]
    if (!values) return template
    return template.replace(/\{(\w+)\}/g, (match, name: string) =>
      name in values ? String(values[name]) : match,
    )
  }
}
