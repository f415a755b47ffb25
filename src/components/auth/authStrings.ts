import { joinStrings } from '../i18n/joinStrings.ts'
import { authStrings } from '../i18n/sections/auth.ts'
import { uiStrings } from '../ui/uiStrings.ts'

/** What the sign-in flow renders: the ui parts' strings and the sign-in's own. */
export const authUiStrings = /* @__PURE__ */ joinStrings(uiStrings, authStrings)
export type AuthKey = keyof typeof authUiStrings.en
