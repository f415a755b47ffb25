/** English strings of `<UserProfile/>`. */
export const enProfile = {
  profileTitle: 'Profile',
  nameLabel: 'Name',
  notSet: 'Not set',
  passkeysTitle: 'Passkeys',
  passkeysEmpty: 'No passkeys yet.',
  removePasskey: 'Remove passkey {name}',
  providersTitle: 'Connected accounts',
  providersEmpty: 'No connected accounts.',
  sessionsTitle: 'Active sessions',
  sessionsEmpty: 'No active sessions.',
  thisSession: 'This session',
  useSession: 'Switch',
  sessionExpiresAt: 'Expires {time}',
  logOutSession: 'Sign out of {name}',
  nameSaved: 'Name saved.',
}
