/** English strings of `<SignMessageDialog/>`. */
export const enSign = {
  signTitle: 'Signature request',
  signDescription: 'Only sign messages from apps you trust. Signing costs nothing.',
  signMessageLabel: 'Message',
  signAction: 'Sign',
  signing: 'Waiting for signature…',
  signatureLabel: 'Signature',
  signedTitle: 'Message signed',
  copySignature: 'Copy signature',
}
