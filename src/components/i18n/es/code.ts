import type { enCode } from '../en/code.ts'
import type { Translation } from '../strings.ts'

/** Spanish: a code typed from an authenticator app or a message: the MFA step-up, enrolment and linking an e-mail. */
export const code: Translation<typeof enCode> = {
  mfaVerify: 'Verificar',
  mfaCodeFormat: 'Introduce los 6 dígitos que muestra tu app de autenticación.',
  mfaCodeWrong: 'Ese código no es correcto o ya se usó. Espera al siguiente código e inténtalo de nuevo.',
  mfaTooManyTries: 'Demasiados intentos. Espera {minutes} min e inténtalo de nuevo.',
  mfaContactSent: 'Enviamos un código a {to}. Caduca en unos minutos.',
  mfaContactCodeLabel: 'Código del mensaje',
  mfaContactResend: 'Enviar un código nuevo',
  mfaContactFormat: 'Escribe los 6 a 9 caracteres del mensaje.',
  mfaContactWrong: 'Ese código no es correcto o caducó. Revisa el último mensaje o envía un código nuevo.',
}
