import { type CSSProperties, useMemo } from 'react'
import { directionOf, readDictionary, type Translate, translateWith } from '../i18n/dictionary.ts'
import type { MessageKey, Messages } from '../i18n/en.ts'
import { definedOnly, useUiContext } from './LatchkeyUIProvider.tsx'
import { RADII, type UiOptions } from './uiOptions.ts'

/** The resolved look and language of a component; `t` knows the keys `K` (all unless narrowed). */
export interface Ui<K extends MessageKey = MessageKey> {
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
}

/**
 * `useUi` over the English strings given: all of `en` (`useUi`), or only those a component renders
 * before the rest of its code loads (`<AuthModal/>`'s trigger), so that it does not bundle `en`.
 * Suspends while a non-English dictionary loads the first time.
 */
export function useUiWith<K extends MessageKey>(props: UiOptions, english: Pick<Messages, K>): Ui<K> {
  const context = useUiContext()
  const options: UiOptions = { ...context, ...definedOnly(props) }
  const locale = options.locale ?? 'en'
  const theme = options.theme ?? 'system'
  const messages = readDictionary(locale, english)
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
      t: translateWith(messages, overrides, english),
      locale,
      dir,
      rootProps: {
        className: 'lk-root',
        'data-lk-theme': theme,
        dir,
        lang: locale,
        ...(Object.keys(style).length ? { style: style as CSSProperties } : {}),
      },
    }
  }, [messages, overrides, english, locale, theme, accent, radius, font])
}
