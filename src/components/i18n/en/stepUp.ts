/** English strings of the MFA step-up (its lazy chunk). */
export const enStepUp = {
  mfaTitle: 'Confirm it’s you',
  mfaBodyCode: 'Enter the 6-digit code from your authenticator app to continue.',
  mfaNextCode: 'One more step: enter the next code from your app (each code works once).',
  mfaBodyPasskey: 'Use your passkey to continue.',
  mfaCodeLabel: 'Authenticator code',
  mfaRecoveryLabel: 'Recovery code',
  mfaUseRecovery: 'Use a recovery code instead',
  mfaUseCode: 'Use the authenticator code instead',
  mfaUsePasskey: 'Use a passkey',
  mfaRecoveryFormat: 'A recovery code has 10 letters and digits, like ABCDE-FGH23.',
  mfaRecoveryWrong: 'That recovery code isn’t right, or it was already used.',
  mfaEmailMe: 'Email me a code',
  mfaTextMe: 'Text me a code',
  mfaContactNoContact: 'There is no verified address or number to send a code to.',
}
