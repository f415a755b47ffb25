/** English strings of what `<AuthModal/>` renders before its body loads: the trigger, the signed-in badge and the dialog shell (its header and loading state), at start-up. */
export const enTrigger = {
  close: 'Close',
  back: 'Back',
  loading: 'Loading…',
  signIn: 'Sign in',
  signInTitle: 'Sign in',
  logOut: 'Sign out',
  sessionActive: 'Signed in',
  sessionExpiredSignIn: 'Session expired — sign in again',
}
