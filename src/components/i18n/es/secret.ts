import type { enSecret } from '../en/secret.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<ExportWallet/>` and `<ImportWallet/>`. */
export const secret: Translation<typeof enSecret> = {
  exportTitle: 'Exportar billetera',
  exportAccountTitle: 'Exportar clave privada',
  exportWarningTitle: 'Mantenlo en secreto',
  exportWarningBody: 'Quien vea tu {secret} puede llevarse todo lo que hay en esta billetera.',
  exportWarning1: 'No la compartas nunca, ni siquiera con soporte.',
  exportWarning2: 'Asegúrate de que nadie vea tu pantalla.',
  exportWarning3: 'Guárdala sin conexión, en un lugar seguro.',
  exportAcknowledge: 'Lo entiendo y estoy en un lugar privado',
  exportReveal: 'Mostrar {secret}',
  secretMnemonic: 'frase de recuperación',
  secretPrivateKey: 'clave privada',
  exportFrameTitle: 'Tu {secret}, en un marco seguro',
  exportFrameNote:
    'Se muestra dentro de un marco servido por el servicio de billeteras. Esta aplicación nunca la ve.',
  importTitle: 'Importar billetera',
  importWarningBody:
    'Escribe tu frase de recuperación en el marco seguro de abajo. Se cifra allí y nunca llega a esta aplicación.',
  importFrameTitle: 'Frase de recuperación, en un marco seguro',
  importPhraseLabel: 'Frase de recuperación',
  importAction: 'Importar billetera',
  importing: 'Importando…',
  importedTitle: 'Billetera importada',
  importedBody: '«{wallet}» está lista con {count} cuenta(s).',
  frameLoading: 'Abriendo el marco seguro…',
}
