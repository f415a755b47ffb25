import type { enTrigger } from '../en/trigger.ts'
import type { Translation } from '../strings.ts'

/** Spanish: what `<AuthModal/>` renders before its body loads: the trigger, the signed-in badge and the dialog shell (its header and loading state), at start-up. */
export const trigger: Translation<typeof enTrigger> = {
  close: 'Cerrar',
  back: 'Atrás',
  loading: 'Cargando…',
  signIn: 'Iniciar sesión',
  signInTitle: 'Iniciar sesión',
  logOut: 'Cerrar sesión',
  sessionActive: 'Sesión iniciada',
  sessionExpiredSignIn: 'La sesión caducó: vuelve a iniciar sesión',
}
