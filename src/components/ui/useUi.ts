import { type CSSProperties, useMemo } from 'react'
import { createTranslate, directionOf, readMessages, type Translate } from '../i18n/messages.ts'
import { definedOnly, useUiContext } from './LatchkeyUIProvider.tsx'
import { RADII, type UiOptions } from './uiOptions.ts'

export interface Ui {
  t: Translate
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
 * Resolves the look-and-language options of a component (props over provider over defaults).
 * Suspends while a non-English dictionary loads the first time.
 */
export function useUi(props: UiOptions): Ui {
  const context = useUiContext()
  const options: UiOptions = { ...context, ...definedOnly(props) }
  const locale = options.locale ?? 'en'
  const theme = options.theme ?? 'system'
  const messages = readMessages(locale)
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
      t: createTranslate(messages, overrides),
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
  }, [messages, overrides, locale, theme, accent, radius, font])
}
