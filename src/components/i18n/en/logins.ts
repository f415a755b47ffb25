/** English strings of `<LinkedLogins/>`. */
export const enLogins = {
  loginsTitle: 'Ways to sign in',
  loginsEmpty: 'No way to sign in is linked.',
  loginPasskey: 'Passkey',
  loginWallet: 'Wallet',
  loginApiKey: 'API key',
  loginUnlink: 'Unlink',
  loginUnlinkLabel: 'Unlink {name}',
  loginUnlinkConfirm: 'Unlink {name}? You won’t be able to sign in with it any more.',
  loginUnlinkYes: 'Yes, unlink',
  loginUnlinked: '{name} is unlinked.',
  loginLastWayIn: 'This is your last way to sign in, so it can’t be unlinked. Link another one first.',
  loginLinkEmail: 'Link an email',
  loginSendCode: 'Send code',
  loginLinked: '{name} is linked.',
  loginLinkOAuth: 'Link {provider}',
  loginOAuthTaken:
    'This {provider} account is already linked to another account. Sign in with it to use that one.',
  loginOAuthBlocked: 'The {provider} window was blocked. Allow pop-ups, then try again.',
  loginOAuthBlockedBody: 'Your browser blocked the {provider} window. Open it from here instead.',
  loginOAuthOpen: 'Open the {provider} window',
}
