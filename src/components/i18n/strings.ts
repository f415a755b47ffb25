// The strings of one screen or drop-in, loaded with it. Each section of the dictionary (the sign-in
// trigger, the ui parts, <SpendingLimits/>…) is English in `en/<section>.ts`, which the screen
// imports (so the English lands in the screen's own chunk), and a translation per built-in
// locale in `es/<section>.ts`, `ar/<section>.ts`, each a chunk of its own loaded on first use.
// An app showing only the sign-in modal in Spanish downloads only the sign-in's Spanish.

/** Locales shipped with the kit. Others fall back to English (override strings with `messages`). */
export const BUILT_IN_LOCALES = ['en', 'es', 'ar'] as const
export type BuiltInLocale = (typeof BUILT_IN_LOCALES)[number]
type Translated = Exclude<BuiltInLocale, 'en'>

/** A set of strings by key. */
export type Dictionary<K extends string> = { readonly [P in K]: string }
/** What a translation of the English strings `E` must hold: every key, nothing else. */
export type Translation<E> = { readonly [K in keyof E]: string }

/** A promise that records its outcome, so loaded strings are read synchronously and never suspend again. */
export type Tracked<T> = Promise<T> & {
  status?: 'pending' | 'fulfilled' | 'rejected'
  value?: T
  reason?: unknown
}

function track<T>(promise: Promise<T>): Tracked<T> {
  const tracked = promise as Tracked<T>
  tracked.status = 'pending'
  tracked.then(
    (value) => {
      tracked.status = 'fulfilled'
      tracked.value = value
    },
    (reason: unknown) => {
      tracked.status = 'rejected'
      tracked.reason = reason
    },
  )
  return tracked
}

interface Section {
  en: Dictionary<string>
  load: Record<Translated, () => Promise<Dictionary<string>>>
  /** Per language: immutable static data (never per-user state), shared by every provider on the page. */
  loaded: Map<Translated, Tracked<Dictionary<string>>>
}

/** The strings a screen renders: English at hand, the built-in translations loaded on demand. */
export interface Strings<K extends string> {
  readonly en: Dictionary<K>
  /** @internal the sections joined */
  readonly sections: readonly Section[]
  /** @internal per language: the sections' translations merged, once all are loaded */
  readonly merged: Map<Translated, Dictionary<K> | Tracked<unknown>>
}

type KeyOf<S> = S extends Strings<infer K> ? K : never

/** One section: its English strings and the loaders of its translations (dynamic imports). */
export function defineStrings<E extends Dictionary<string>>(
  en: E,
  load: Record<Translated, () => Promise<Translation<E>>>,
): Strings<keyof E & string> {
  return { en, sections: [{ en, load, loaded: new Map() }], merged: new Map() }
}

/** The strings of several sections as one (a screen's own plus the ui parts'). */
export function joinStrings<S extends Strings<string>[]>(...parts: S): Strings<KeyOf<S[number]>> {
  const sections = [...new Set(parts.flatMap((part) => part.sections))]
  return {
    en: Object.assign({}, ...sections.map((section) => section.en)),
    sections,
    merged: new Map(),
  }
}

const RTL_LANGUAGES = new Set(['ar', 'fa', 'he', 'iw', 'ps', 'ur', 'yi', 'dv', 'ckb', 'sd', 'ug'])

/** The language subtag of a BCP-47 tag: `es-MX` → `es`. */
export const languageOf = (locale: string): string => locale.toLowerCase().split(/[-_]/)[0] ?? 'en'

/** Writing direction of a locale. */
export const directionOf = (locale: string): 'ltr' | 'rtl' =>
  RTL_LANGUAGES.has(languageOf(locale)) ? 'rtl' : 'ltr'

const translatedLanguage = (locale: string): Translated | undefined => {
  const lang = languageOf(locale)
  return lang === 'es' || lang === 'ar' ? lang : undefined
}

function loadSection(section: Section, lang: Translated): Tracked<Dictionary<string>> {
  let promise = section.loaded.get(lang)
  if (!promise) {
    promise = track(section.load[lang]())
    section.loaded.set(lang, promise)
  }
  return promise
}

/**
 * `strings` in `locale` during render: English (or an unknown locale) synchronously, a built-in
 * translation once its sections are loaded. While one loads this throws a promise, which suspends
 * to the nearest `<Suspense>` on React 18 and 19 alike (React 19's `use()` does not exist on 18).
 */
export function readStrings<K extends string>(strings: Strings<K>, locale: string): Dictionary<K> {
  const lang = translatedLanguage(locale)
  if (!lang) return strings.en
  const known = strings.merged.get(lang)
  if (known && !(known instanceof Promise)) return known
  const loads = strings.sections.map((section) => loadSection(section, lang))
  const failed = loads.find((load) => load.status === 'rejected')
  if (failed) throw failed.reason
  if (loads.every((load) => load.status === 'fulfilled')) {
    const merged = Object.assign({}, ...loads.map((load) => load.value)) as Dictionary<K>
    strings.merged.set(lang, merged)
    return merged
  }
  // One promise per strings and language, so React sees the same one on every try.
  const pending = (known as Tracked<unknown> | undefined) ?? track(Promise.all(loads))
  strings.merged.set(lang, pending)
  throw pending
}

/** `strings` in `locale`, loaded (for preloading before a render). */
export async function loadStrings<K extends string>(
  strings: Strings<K>,
  locale: string,
): Promise<Dictionary<K>> {
  const lang = translatedLanguage(locale)
  if (!lang) return strings.en
  await Promise.all(strings.sections.map((section) => loadSection(section, lang)))
  return readStrings(strings, locale)
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
