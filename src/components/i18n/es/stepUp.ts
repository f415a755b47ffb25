import type { enStepUp } from '../en/stepUp.ts'
import type { Translation } from '../strings.ts'

/** Spanish: the MFA step-up (its lazy chunk). */
export const stepUp: Translation<typeof enStepUp> = {
  mfaTitle: 'Confirma que eres tú',
  mfaBodyCode: 'Introduce el código de 6 dígitos de tu app de autenticación para continuar.',
  mfaNextCode: 'Un paso más: introduce el siguiente código de tu app (cada código sirve una vez).',
  mfaBodyPasskey: 'Usa tu llave de acceso para continuar.',
  mfaCodeLabel: 'Código de autenticación',
  mfaRecoveryLabel: 'Código de recuperación',
  mfaUseRecovery: 'Usar un código de recuperación',
  mfaUseCode: 'Usar el código de la app de autenticación',
  mfaUsePasskey: 'Usar una llave de acceso',
  mfaRecoveryFormat: 'Un código de recuperación tiene 10 letras y cifras, como ABCDE-FGH23.',
  mfaRecoveryWrong: 'Ese código de recuperación no es correcto o ya se usó.',
  mfaEmailMe: 'Envíame un código por correo',
  mfaTextMe: 'Envíame un código por SMS',
  mfaContactNoContact: 'No hay ninguna dirección o número verificado al que enviar un código.',
}
