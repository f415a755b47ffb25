import type { enProfile } from '../en/profile.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<UserProfile/>`. */
export const profile: Translation<typeof enProfile> = {
  profileTitle: 'Perfil',
  nameLabel: 'Nombre',
  notSet: 'Sin configurar',
  passkeysTitle: 'Llaves de acceso',
  passkeysEmpty: 'Aún no hay llaves de acceso.',
  removePasskey: 'Quitar la llave de acceso {name}',
  providersTitle: 'Cuentas conectadas',
  providersEmpty: 'No hay cuentas conectadas.',
  sessionsTitle: 'Sesiones activas',
  sessionsEmpty: 'No hay sesiones activas.',
  thisSession: 'Esta sesión',
  useSession: 'Cambiar',
  sessionExpiresAt: 'Caduca {time}',
  logOutSession: 'Cerrar la sesión {name}',
  nameSaved: 'Nombre guardado.',
}
