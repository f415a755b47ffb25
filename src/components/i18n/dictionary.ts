import type { MessageKey, Messages } from './en.ts'

// The dictionary machinery without the English dictionary itself: every caller passes the English
// strings it needs (all of `en`, or the trigger's few), so importing this never bundles `en`.

/** Locales shipped with the kit. Others fall back to English (override strings with `messages`). */
export const BUILT_IN_LOCALES = ['en', 'es', 'ar'] as const
export type BuiltInLocale = (typeof BUILT_IN_LOCALES)[number]

/** A promise that records its outcome, so a loaded dictionary is read synchronously and never suspends again. */
export type Tracked<T> = Promise<T> & {
  status?: 'pending' | 'fulfilled' | 'rejected'
  value?: T
  reason?: unknown
}

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
 * The dictionary for `locale`: `english` synchronously, a built-in locale as a tracked promise
 * (read it during render with `readDictionary`).
 */
export function loadDictionary<E>(locale: string, english: E): E | Tracked<Messages> {
  const lang = languageOf(locale)
  if (!(lang in loaders)) return english
  let promise = loaded.get(lang)
  if (!promise) {
    promise = loaders[lang as keyof typeof loaders]() as Tracked<Messages>
    promise.status = 'pending'
    promise.then(
      (value) => {
        promise!.status = 'fulfilled'
        promise!.value = value
      },
      (reason: unknown) => {
        promise!.status = 'rejected'
        promise!.reason = reason
      },
    )
    loaded.set(lang, promise)
  }
  return promise
}

/**
 * The dictionary for `locale` during render: synchronous once loaded; while loading it throws the
 * promise, which suspends to the nearest `<Suspense>` on React 18 and 19 alike (React 19's `use()`
 * does not exist on 18, where calling it is a white page).
 */
export function readDictionary<E>(locale: string, english: E): E | Messages {
  const messages = loadDictionary(locale, english)
  if (!(messages instanceof Promise)) return messages
  if (messages.status === 'fulfilled') return messages.value as Messages
  if (messages.status === 'rejected') throw messages.reason
  throw messages
}

/** Translates the keys `K` (all of them unless narrowed, as for the trigger's few strings). */
export type Translate<K extends MessageKey = MessageKey> = (
  key: K,
  values?: Record<string, string | number>,
) => string

/**
 * A translate function over a dictionary, app overrides and a fallback for missing keys. Unknown
 * `{name}` markers stay as typed.
 */
export function translateWith<K extends MessageKey>(
  messages: Pick<Messages, K>,
  overrides: Partial<Messages> | undefined,
  fallback: Pick<Messages, K>,
): Translate<K> {
  return (key, values) => {
    const template = overrides?.[key] ?? messages[key] ?? fallback[key]
    if (!values) return template
    return template.replace(/\{(\w+)\}/g, (match, name: string) =>
      name in values ? String(values[name]) : match,
    )
  }
}
