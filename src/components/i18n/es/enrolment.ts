import type { enEnrolment } from '../en/enrolment.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<SecuritySettings/>`' authenticator enrolment (its lazy chunk). */
export const enrolment: Translation<typeof enEnrolment> = {
  secEnrolTitle: 'Escanea este código QR',
  secEnrolBody: 'Escanéalo con tu app de autenticación o escribe la clave a mano.',
  secEnrolQr: 'Código QR de la clave para tu app de autenticación',
  secEnrolKey: 'Clave',
  secEnrolLink: 'Enlace de configuración',
  secEnrolCopyKey: 'Copiar la clave',
  secEnrolCopyLink: 'Copiar el enlace de configuración',
  secEnrolConfirmTitle: 'Escribe un código para terminar',
  secEnrolConfirm: 'Confirmar',
  secEnrolStarting: 'Preparando una clave…',
}
