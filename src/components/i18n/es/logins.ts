import type { enLogins } from '../en/logins.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<LinkedLogins/>`. */
export const logins: Translation<typeof enLogins> = {
  loginsTitle: 'Formas de iniciar sesión',
  loginsEmpty: 'No hay ninguna forma de iniciar sesión vinculada.',
  loginPasskey: 'Llave de acceso',
  loginWallet: 'Billetera',
  loginApiKey: 'Clave de API',
  loginUnlink: 'Desvincular',
  loginUnlinkLabel: 'Desvincular {name}',
  loginUnlinkConfirm: '¿Desvincular {name}? Ya no podrás iniciar sesión con ello.',
  loginUnlinkYes: 'Sí, desvincular',
  loginUnlinked: '{name} está desvinculado.',
  loginLastWayIn:
    'Es tu última forma de iniciar sesión, así que no se puede desvincular. Vincula otra primero.',
  loginLinkEmail: 'Vincular un correo',
  loginSendCode: 'Enviar código',
  loginLinked: '{name} está vinculado.',
  loginLinkOAuth: 'Vincular {provider}',
  loginOAuthTaken:
    'Esta cuenta de {provider} ya está vinculada a otra cuenta. Inicia sesión con ella para usar esa.',
  loginOAuthBlocked:
    'Se bloqueó la ventana de {provider}. Permite las ventanas emergentes y vuelve a intentarlo.',
  loginOAuthBlockedBody: 'Tu navegador bloqueó la ventana de {provider}. Ábrela desde aquí.',
  loginOAuthOpen: 'Abrir la ventana de {provider}',
}
