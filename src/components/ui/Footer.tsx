import { ShieldIcon } from './noticeIcons.tsx'
import type { Ui } from './useUi.ts'

/** The “Secured by Latchkey” line under a step. */
export function Footer({ ui }: { ui: Ui }) {
  return (
    <p className="lk-footer">
      <ShieldIcon />
      {ui.t('securedBy')}
    </p>
  )
}
