/** English strings of `<SessionStatus/>`. */
export const enSession = {
  sessionSignedOut: 'Not signed in',
  sessionExpiring: 'Session ending soon',
  sessionExpired: 'Session expired',
  sessionStorageLost: 'Session keys were cleared',
  sessionExpiresIn: 'Ends in {time}',
  sessionRefresh: 'Stay signed in',
  sessionRefreshing: 'Refreshing…',
  sessionSignInAgain: 'Sign in again',
  sessionReadOnly: 'Read-only',
}
