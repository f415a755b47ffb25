/** English strings of `<SecuritySettings/>`' authenticator enrolment (its lazy chunk). */
export const enEnrolment = {
  secEnrolTitle: 'Scan this QR code',
  secEnrolBody: 'Scan it with your authenticator app, or enter the key by hand.',
  secEnrolQr: 'QR code of your authenticator app’s key',
  secEnrolKey: 'Key',
  secEnrolLink: 'Setup link',
  secEnrolCopyKey: 'Copy the key',
  secEnrolCopyLink: 'Copy the setup link',
  secEnrolConfirmTitle: 'Enter a code to finish',
  secEnrolConfirm: 'Confirm',
  secEnrolStarting: 'Preparing a key…',
}
