import { type CSSProperties, useMemo } from 'react'
import type { Messages } from '../i18n/en.ts'
import { directionOf, readStrings, type Strings, type Translate, translateWith } from '../i18n/strings.ts'
import { definedOnly, useUiContext } from './LatchkeyUIProvider.tsx'
import { RADII, type UiOptions } from './uiOptions.ts'
import type { UiKey } from './uiStrings.ts'

export type { UiKey } from './uiStrings.ts'

/** The resolved look and language of a component; `t` knows the keys `K`. */
export interface Ui<K extends string = UiKey> {
  t: Translate<K>
  locale: string
  dir: 'ltr' | 'rtl'
  /** Spread on a component's outermost element: theme scope, direction, language, variables. */
  rootProps: {
    className: string
    'data-lk-theme': 'light' | 'dark' | 'system'
    dir: 'ltr' | 'rtl'
    lang: string
    style?: CSSProperties
  }
  /** The app's overrides (props over provider), for the strings a lazy step adds (`useStrings`). */
  overrides: Partial<Messages> | undefined
}

/**
 * Resolves the look-and-language options of a component (props over provider over defaults) and
 * its strings: a component passes the sections it renders (`joinStrings(uiStrings, limitsStrings)`),
 * so their English lands in its chunk and a built-in translation loads only those sections.
 * Suspends while a translation loads the first time.
 */
export function useUi<K extends string>(props: UiOptions, strings: Strings<K>): Ui<K> {
  const context = useUiContext()
  const options: UiOptions = { ...context, ...definedOnly(props) }
  const locale = options.locale ?? 'en'
  const theme = options.theme ?? 'system'
  const messages = readStrings(strings, locale)
  const overrides =
    props.messages && context.messages
      ? { ...context.messages, ...props.messages }
      : (props.messages ?? context.messages)
  const { accent, radius, font } = options
  return useMemo(() => {
    const dir = directionOf(locale)
    const style: Record<string, string> = {}
    if (accent) style['--lk-accent'] = accent
    if (radius) style['--lk-radius'] = RADII[radius] ?? radius
    if (font) style['--lk-font'] = font
    return {
      t: translateWith(messages, overrides, strings.en),
      locale,
      dir,
      rootProps: {
        className: 'lk-root',
        'data-lk-theme': theme,
        dir,
        lang: locale,
        ...(Object.keys(style).length ? { style: style as CSSProperties } : {}),
      },
      overrides,
    }
  }, [messages, overrides, strings, locale, theme, accent, radius, font])
}
