// The strings of one screen or drop-in, loaded with it. Each section of the dictionary (the sign-in
// trigger, the ui parts, <SpendingLimits/>…) is English in `en/<section>.ts`, which the screen
// imports (so the English lands in the screen's own chunk), and a translation per built-in
// locale in `es/<section>.ts`, `ar/<section>.ts`, each a chunk of its own loaded on first use.
// An app showing only the sign-in modal in Spanish downloads only the sign-in's Spanish.

/** Locales shipped with the kit. Others fall back to English (override strings with `messages`). */
export const BUILT_IN_LOCALES = ['en', 'es', 'ar'] as const
export type BuiltInLocale = (typeof BUILT_IN_LOCALES)[number]
/** The built-in translations. */
export type Translated = Exclude<BuiltInLocale, 'en'>

/** A set of strings by key. */
export type Dictionary<K extends string> = { readonly [P in K]: string }
/** What a translation of the English strings `E` must hold: every key, nothing else. */
export type Translation<E> = { readonly [K in keyof E]: string }

/** The strings a screen renders: English at hand, the built-in translations loaded on demand. */
export interface Strings<K extends string> {
  readonly en: Dictionary<K>
  /**
   * @internal The strings in a built-in translation, once loaded; until then it throws the promise
   * of the load (or why the load failed).
   */
  readonly read: (lang: Translated) => Dictionary<K>
  /** @internal the strings joined (`joinStrings`) */
  readonly parts?: readonly Strings<string>[]
}

/** A promise that records its outcome, so loaded strings are read synchronously and never suspend again. */
type Tracked<T> = Promise<T> & { status?: 'fulfilled' | 'rejected'; value?: T; reason?: unknown }

/**
 * One section: its English strings and the loaders of its translations (dynamic imports). A load
 * is made once per language and shared by every provider on the page (static data, never
 * per-user state).
 */
export function defineStrings<E extends Dictionary<string>>(
  en: E,
  load: Record<Translated, () => Promise<Translation<E>>>,
): Strings<keyof E & string> {
  const loads: Partial<Record<Translated, Tracked<Translation<E>>>> = {}
  const read = (lang: Translated) => {
    let loading = loads[lang]
    if (!loading) {
      const started: Tracked<Translation<E>> = load[lang]()
      started.then(
        (value) => {
          started.status = 'fulfilled'
          started.value = value
        },
        (reason: unknown) => {
          started.status = 'rejected'
          started.reason = reason
        },
      )
      loads[lang] = loading = started
    }
    if (loading.status === 'fulfilled') return loading.value as Translation<E>
    throw loading.status === 'rejected' ? loading.reason : loading
  }
  return { en, read }
}

const RTL_LANGUAGES = new Set(['ar', 'fa', 'he', 'iw', 'ps', 'ur', 'yi', 'dv', 'ckb', 'sd', 'ug'])

/** The language subtag of a BCP-47 tag: `es-MX` → `es`. */
export const languageOf = (locale: string): string => locale.toLowerCase().split(/[-_]/)[0] ?? 'en'

/** Writing direction of a locale. */
export const directionOf = (locale: string): 'ltr' | 'rtl' =>
  RTL_LANGUAGES.has(languageOf(locale)) ? 'rtl' : 'ltr'

/**
 * `strings` in `locale` during render: English (or an unknown locale) synchronously, a built-in
 * translation once loaded. While it loads this throws a promise, which suspends to the nearest
 * `<Suspense>` on React 18 and 19 alike (React 19's `use()` does not exist on 18).
 */
export function readStrings<K extends string>(strings: Strings<K>, locale: string): Dictionary<K> {
  const lang = languageOf(locale)
  return lang === 'es' || lang === 'ar' ? strings.read(lang) : strings.en
}

/** Translates the keys `K`. */
export type Translate<K extends string = string> = (
  key: K,
  values?: Record<string, string | number>,
) => string

/**
 * A translate function over a dictionary, app overrides and a fallback for missing keys. Unknown
 * `{name}` markers stay as typed.
 */
export function translateWith<K extends string>(
  messages: Dictionary<K>,
  overrides: Partial<Record<string, string>> | undefined,
  fallback: Dictionary<K>,
): Translate<K> {
  return (key, values) => {
    const template = overrides?.[key] ?? messages[key] ?? fallback[key]
    if (!values) return template
    return template.replace(/\{(\w+)\}/g, (match, name: string) =>
      name in values ? String(values[name]) : match,
    )
  }
}
