import type { enSession } from '../en/session.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<SessionStatus/>`. */
export const session: Translation<typeof enSession> = {
  sessionSignedOut: 'Sin sesión iniciada',
  sessionExpiring: 'La sesión termina pronto',
  sessionExpired: 'La sesión caducó',
  sessionStorageLost: 'Se borraron las claves de la sesión',
  sessionExpiresIn: 'Termina en {time}',
  sessionRefresh: 'Seguir conectado',
  sessionRefreshing: 'Renovando…',
  sessionSignInAgain: 'Volver a iniciar sesión',
  sessionReadOnly: 'Solo lectura',
}
