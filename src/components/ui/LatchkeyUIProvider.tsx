import { createContext, type ReactNode, useContext, useMemo } from 'react'
import type { UiOptions } from './uiOptions.ts'

const UiContext = createContext<UiOptions>({})

export interface LatchkeyUIProviderProps extends UiOptions {
  children?: ReactNode
}

/** Sets theme, locale, strings, accent, radius and font for every Latchkey component below it. */
export function LatchkeyUIProvider({ children, ...options }: LatchkeyUIProviderProps) {
  const parent = useContext(UiContext)
  const { theme, locale, messages, accent, radius, font } = options
  const value = useMemo(
    () => ({
      ...parent,
      ...definedOnly({ theme, locale, accent, radius, font }),
      messages: messages ? { ...parent.messages, ...messages } : parent.messages,
    }),
    [parent, theme, locale, messages, accent, radius, font],
  )
  return <UiContext.Provider value={value}>{children}</UiContext.Provider>
}

export const useUiContext = (): UiOptions => useContext(UiContext)

export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}
