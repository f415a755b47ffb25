/**
 * The English strings `<AuthModal/>` renders before its body loads: the trigger, the signed-in
 * badge and the dialog shell (its header and loading state). Part of `en` (which spreads them), kept
 * apart so a page that never opens the modal does not download the whole dictionary.
 */
export const enTrigger = {
  close: 'Close',
  back: 'Back',
  loading: 'Loading…',
  signIn: 'Sign in',
  signInTitle: 'Sign in',
  logOut: 'Sign out',
  sessionActive: 'Signed in',
  /** The trigger and the first step once the session has expired. */
  sessionExpiredSignIn: 'Session expired — sign in again',
}

export type TriggerMessageKey = keyof typeof enTrigger
