import { en } from '../i18n/en.ts'
import type { UiOptions } from './uiOptions.ts'
import { type Ui, useUiWith } from './useUiWith.ts'

export type { Ui } from './useUiWith.ts'

/**
 * Resolves the look-and-language options of a component (props over provider over defaults).
 * Suspends while a non-English dictionary loads the first time.
 */
export function useUi(props: UiOptions): Ui {
  return useUiWith(props, en)
}
