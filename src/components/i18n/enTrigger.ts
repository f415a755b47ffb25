import type { Messages } from './en.ts'

/**
 * The English strings `<AuthModal/>` renders before its body loads: the trigger, the signed-in
 * badge and the dialog shell (its header and loading state). A copy of those keys of `en` (a test
 * keeps them equal), so a page that never opens the modal does not download the whole dictionary.
 */
export const enTrigger = {
  close: 'Close',
  back: 'Back',
  loading: 'Loading…',
  signIn: 'Sign in',
  signInTitle: 'Sign in',
  logOut: 'Log out',
  sessionActive: 'Signed in',
} satisfies Partial<Messages>

export type TriggerMessageKey = keyof typeof enTrigger
