/** English strings of a code typed from an authenticator app or a message: the MFA step-up, enrolment and linking an e-mail. */
export const enCode = {
  mfaVerify: 'Verify',
  mfaCodeFormat: 'Enter the 6 digits your authenticator app shows.',
  mfaCodeWrong: 'That code isn’t right, or it was already used. Wait for the next code and try again.',
  mfaTooManyTries: 'Too many tries. Wait {minutes} min and try again.',
  mfaContactSent: 'We sent a code to {to}. It expires in a few minutes.',
  mfaContactCodeLabel: 'Code from the message',
  mfaContactResend: 'Send a new code',
  mfaContactFormat: 'Enter the 6 to 9 characters from the message.',
  mfaContactWrong: 'That code isn’t right, or it expired. Check the latest message, or send a new code.',
}
