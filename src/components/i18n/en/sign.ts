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
  signRefusedTransaction:
    'This message is a transaction: signing it could move your funds, so it was not signed.',
  signRefusedNoFormat: 'This account’s network has no message signing here, so nothing was signed.',
}
