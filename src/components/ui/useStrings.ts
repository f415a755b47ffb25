import { useMemo } from 'react'
import { type Dictionary, readStrings, type Strings, type Translate, translateWith } from '../i18n/strings.ts'
import type { Ui } from './useUi.ts'

// Apart from useUi.ts, which the start-up code (the sign-in trigger) carries: only steps that load
// later add strings.

/**
 * `ui` with the strings of a step that loads later (the MFA step-up, a form in a lazy chunk): the
 * step imports them, so they come with its chunk rather than with the screen that shows it.
 * Suspends while a translation loads the first time.
 */
export function useStrings<K extends string, L extends string>(ui: Ui<K>, strings: Strings<L>): Ui<K | L> {
  const messages: Dictionary<L> = readStrings(strings, ui.locale)
  return useMemo(() => {
    const own = translateWith(messages, ui.overrides, strings.en)
    const t: Translate<K | L> = (key, values) =>
      key in strings.en ? own(key as L, values) : ui.t(key as K, values)
    return { ...ui, t }
  }, [ui, messages, strings])
}
