import type { UiOptions } from '../ui/uiOptions.ts'

/** Props of `<SecuritySettings/>` (apart, so that its lazily loaded panel imports no cycle). */
export interface SecuritySettingsProps extends UiOptions {
  /** Called after each change the user made (a factor, recovery codes, a rule). */
  onChange?: (() => void) | undefined
  className?: string | undefined
}
