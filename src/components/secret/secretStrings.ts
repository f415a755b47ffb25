import { joinStrings } from '../i18n/joinStrings.ts'
import { secretStrings } from '../i18n/sections/secret.ts'
import { uiStrings } from '../ui/uiStrings.ts'

/** What `<ExportWallet/>` and `<ImportWallet/>` render. */
export const secretUiStrings = /* @__PURE__ */ joinStrings(uiStrings, secretStrings)
export type SecretKey = keyof typeof secretUiStrings.en
