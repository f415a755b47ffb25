import { joinStrings } from '../i18n/joinStrings.ts'
import { limitsStrings } from '../i18n/sections/limits.ts'
import { spendingStrings } from '../i18n/sections/spending.ts'
import { uiStrings } from '../ui/uiStrings.ts'

/** What `<AgentAllowance/>` and `<SpendingLimits/>` render: the ui parts', the limits' in words, their own. */
export const limitsUiStrings = /* @__PURE__ */ joinStrings(uiStrings, spendingStrings, limitsStrings)
export type LimitsKey = keyof typeof limitsUiStrings.en
