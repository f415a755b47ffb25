import type { Messages } from '../i18n/en.ts'

/** Look-and-language options shared by every component (props win over `<LatchkeyUIProvider>`). */
export interface UiOptions {
  /**
   * Colour scheme. `system` follows `prefers-color-scheme`.
   * @default 'system'
   */
  theme?: 'light' | 'dark' | 'system'
  /**
   * BCP-47 locale. English, Spanish (`es`) and Arabic (`ar`, right to left) are built in; other
   * locales use English unless `messages` supplies the strings.
   * @default 'en'
   */
  locale?: string
  /** Overrides for any string of the dictionary, e.g. `{ signIn: 'Log in' }`. */
  messages?: Partial<Messages>
  /** Accent colour (any CSS colour); sets `--lk-accent`. @default '#4f46e5' (dark: '#818cf8') */
  accent?: string
  /**
   * Corner radius: a preset or any CSS length; sets `--lk-radius`.
   * @default 'md' (10px)
   */
  radius?: 'none' | 'sm' | 'md' | 'lg' | 'full' | (string & {})
  /** Font stack; sets `--lk-font`. @default the system UI font stack */
  font?: string
}

export const RADII: Record<string, string> = { none: '0px', sm: '6px', md: '10px', lg: '14px', full: '22px' }
