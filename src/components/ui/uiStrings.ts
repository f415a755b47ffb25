import { joinStrings } from '../i18n/joinStrings.ts'
import { commonStrings } from '../i18n/sections/common.ts'
import { triggerStrings } from '../i18n/sections/trigger.ts'

// Apart from useUi.ts so that the start-up code (the sign-in trigger, which takes only the
// trigger's strings) never bundles the common strings.

/** The strings of the ui parts (buttons, errors, dialogs, the footer), which every screen draws. */
export const uiStrings = /* @__PURE__ */ joinStrings(triggerStrings, commonStrings)
/** The keys of the ui parts' strings: what a part given a `Ui<UiKey>` may translate. */
export type UiKey = keyof typeof commonStrings.en | keyof typeof triggerStrings.en
