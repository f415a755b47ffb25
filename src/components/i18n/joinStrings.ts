import type { Dictionary, Strings, Translated } from './strings.ts'

// Apart from strings.ts, which the start-up code (the sign-in trigger) carries: only the screens
// that load later join sections.

type KeyOf<S> = S extends Strings<infer K> ? K : never

/**
 * The strings of several sections as one (a screen's own plus the ui parts'): a translation is
 * read once every part's is loaded, and merged once per language (one object, for memos).
 */
export function joinStrings<S extends Strings<string>[]>(...parts: S): Strings<KeyOf<S[number]>> {
  const merged: Partial<Record<Translated, Dictionary<string>>> = {}
  const pending: Partial<Record<Translated, Promise<unknown>>> = {}
  const read = (lang: Translated) => {
    const known = merged[lang]
    if (known) return known
    const values: Dictionary<string>[] = []
    const waits: Promise<unknown>[] = []
    for (const part of parts)
      try {
        values.push(part.read(lang))
      } catch (thrown) {
        if (!(thrown instanceof Promise)) throw thrown
        waits.push(thrown)
      }
    if (waits.length === 0) {
      const all: Dictionary<string> = Object.assign({}, ...values)
      merged[lang] = all
      return all
    }
    // One promise while these loads run, so React sees the same one on every try.
    let waiting = pending[lang]
    if (!waiting) {
      waiting = Promise.allSettled(waits).then(() => {
        pending[lang] = undefined
      })
      pending[lang] = waiting
    }
    throw waiting
  }
  return {
    en: Object.assign({}, ...parts.map((part) => part.en)),
    read: read as Strings<KeyOf<S[number]>>['read'],
    parts,
  }
}
