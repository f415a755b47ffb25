import type { enSign } from '../en/sign.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<SignMessageDialog/>`. */
export const sign: Translation<typeof enSign> = {
  signTitle: 'Solicitud de firma',
  signDescription: 'Firma solo mensajes de aplicaciones de confianza. Firmar no cuesta nada.',
  signMessageLabel: 'Mensaje',
  signAction: 'Firmar',
  signing: 'Esperando la firma…',
  signatureLabel: 'Firma',
  signedTitle: 'Mensaje firmado',
  copySignature: 'Copiar firma',
  signRefusedTransaction:
    'Este mensaje es una transacción: firmarlo podría mover tus fondos, así que no se ha firmado.',
  signRefusedNoFormat:
    'La red de esta cuenta no admite aquí la firma de mensajes, así que no se ha firmado nada.',
}
