import { loadDictionary, readDictionary, type Tracked, type Translate, translateWith } from './dictionary.ts'
import { en, type Messages } from './en.ts'

export {
  BUILT_IN_LOCALES,
  type BuiltInLocale,
  directionOf,
  languageOf,
  type Translate,
} from './dictionary.ts'

/**
 * The dictionary for `locale`: English synchronously, a built-in locale as a tracked promise
 * (read it during render with `readMessages`).
 */
export function loadMessages(locale: string): Messages | Tracked<Messages> {
  return loadDictionary(locale, en)
}

/** The dictionary for `locale` during render (suspends while a built-in locale loads). */
export function readMessages(locale: string): Messages {
  return readDictionary(locale, en)
}

/**
 * Loads a built-in dictionary ahead of rendering (e.g. before hydration) so the first render in
 * that locale does not suspend.
 */
export async function preloadMessages(locale: string): Promise<Messages> {
  return loadMessages(locale)
}

/** A translate function over a dictionary plus app overrides. Unknown `{name}` markers stay as typed. */
export function createTranslate(messages: Messages, overrides?: Partial<Messages>): Translate {
  return translateWith(messages, overrides, en)
}
