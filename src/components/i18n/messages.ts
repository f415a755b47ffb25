import { en, type MessageKey, type Messages } from './en.ts'
import { joinStrings } from './joinStrings.ts'
import { approvalStrings } from './sections/approval.ts'
import { authStrings } from './sections/auth.ts'
import { codeStrings } from './sections/code.ts'
import { commonStrings } from './sections/common.ts'
import { enrolmentStrings } from './sections/enrolment.ts'
import { hiddenStrings } from './sections/hidden.ts'
import { limitsStrings } from './sections/limits.ts'
import { loginsStrings } from './sections/logins.ts'
import { profileStrings } from './sections/profile.ts'
import { secretStrings } from './sections/secret.ts'
import { securityStrings } from './sections/security.ts'
import { sendStrings } from './sections/send.ts'
import { sessionStrings } from './sections/session.ts'
import { signStrings } from './sections/sign.ts'
import { spendingStrings } from './sections/spending.ts'
import { stepUpStrings } from './sections/stepUp.ts'
import { triggerStrings } from './sections/trigger.ts'
import { walletsStrings } from './sections/wallets.ts'
import { readStrings, type Strings, type Translate, translateWith } from './strings.ts'

export {
  BUILT_IN_LOCALES,
  type BuiltInLocale,
  directionOf,
  languageOf,
  type Translate,
} from './strings.ts'

/** Every section: what `preloadMessages` loads (and the dictionaries' test checks). */
export const allStrings = /* @__PURE__ */ joinStrings(
  triggerStrings,
  commonStrings,
  authStrings,
  walletsStrings,
  signStrings,
  sendStrings,
  spendingStrings,
  secretStrings,
  profileStrings,
  sessionStrings,
  approvalStrings,
  hiddenStrings,
  codeStrings,
  stepUpStrings,
  securityStrings,
  enrolmentStrings,
  limitsStrings,
  loginsStrings,
)

/** The whole dictionary for `locale` (English for a locale that is not built in). */
export async function loadMessages(locale: string): Promise<Messages> {
  return loadStrings(allStrings, locale)
}

/** `strings` in `locale`, loaded (before a render, which then does not suspend). */
async function loadStrings<K extends string>(strings: Strings<K>, locale: string) {
  for (;;)
    try {
      return readStrings(strings, locale)
    } catch (thrown) {
      if (!(thrown instanceof Promise)) throw thrown
      await thrown
    }
}

/**
 * Loads every built-in string of `locale` ahead of rendering (e.g. before hydration) so that no
 * component suspends on its first render in that locale. Without it each drop-in loads its own
 * strings when it first renders.
 */
export async function preloadMessages(locale: string): Promise<Messages> {
  return loadMessages(locale)
}

/** A translate function over a dictionary plus app overrides. Unknown `{name}` markers stay as typed. */
export function createTranslate(messages: Messages, overrides?: Partial<Messages>): Translate<MessageKey> {
  return translateWith(messages, overrides, en)
}
