import type { enSecurity } from '../en/security.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<SecuritySettings/>`' panel. */
export const security: Translation<typeof enSecurity> = {
  secTitle: 'Seguridad',
  secDescription:
    'Los segundos factores protegen las exportaciones, los envíos grandes y los cambios en tu seguridad.',
  secFactors: 'Tus factores',
  secPasskeys: 'Llaves de acceso',
  secPasskeyCount: '{count} registradas',
  secPasskeyNone: 'Ninguna todavía. Añade una desde tu perfil.',
  secTotp: 'App de autenticación',
  secTotpUnconfirmed: 'Sin confirmar',
  secTotpRemove: 'Quitar',
  secTotpRemoveLabel: 'Quitar la app de autenticación {name}',
  secTotpRemoved: 'Se quitó la app de autenticación {name}.',
  secTotpLast:
    'Esta app de autenticación es la única forma que te queda de cumplir una de tus reglas. Desactiva esa regla primero, o añade una llave de acceso u otra app de autenticación.',
  secTotpAdd: 'Añadir una app de autenticación',
  secRecovery: 'Códigos de recuperación',
  secRecoveryLeft: 'Quedan {count}',
  secRecoveryNone: 'Ninguno',
  secRecoveryCreate: 'Crear códigos de recuperación',
  secRecoveryRegenerate: 'Regenerar',
  secRecoveryRegenerateLabel: 'Regenerar los códigos de recuperación (los anteriores dejan de funcionar)',
  secCodesTitle: 'Tus códigos de recuperación',
  secCodesBody:
    'Cada código sirve una vez, cuando no puedas usar tu app de autenticación. Guárdalos en un lugar seguro ahora: no se volverán a mostrar.',
  secCodesCopy: 'Copiar los códigos',
  secCodesDownload: 'Descargar (.txt)',
  secCodesFileHeader: 'Códigos de recuperación. Cada uno sirve una vez. Guárdalos en un lugar seguro.',
  secCodesDone: 'Ya los guardé',
  secEnrolDone: 'Tu app de autenticación está activa. Crea códigos de recuperación por si la pierdes.',
  secRules: 'Cuándo pedir un segundo factor',
  secRuleExports: 'Exportar una billetera o clave requiere un segundo factor',
  secRuleSends: 'Los envíos por encima de un importe requieren una llave de acceso',
  secRuleAmount: 'Importe (ETH)',
  secRuleAmountHint:
    'Las comisiones cuentan: si el importe de un envío o de una transacción firmada más lo máximo que puede pagar en comisiones supera este importe, se pide la llave de acceso. Los envíos de Solana, y las firmas que no sean mensajes ni datos tipados de Ethereum, la piden sea cual sea el importe.',
  secRuleSave: 'Guardar',
  secRuleSaved: 'Guardado.',
  secRuleAmountInvalid: 'Escribe un importe mayor que 0 con 18 decimales como máximo.',
  secRuleAmountAmbiguous: '«{typed}» puede ser {whole} o {point}. Escribe el importe sin separador de miles.',
  secRuleAmountTooLarge: 'Este importe es demasiado grande. Escribe uno menor.',
  secRuleNeedsFactor: 'Añade antes una app de autenticación o una llave de acceso: esta regla pide una.',
  secRuleNeedsPasskey: 'Añade antes una llave de acceso: esta regla la pide.',
  secRuleOther: 'Otra regla',
}
