import type { enSend } from '../en/send.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<SendTransaction/>`. */
export const send: Translation<typeof enSend> = {
  sendTitle: 'Revisar transacción',
  sendDescription:
    'Revisa cada llamada antes de confirmar. Confirma solo transacciones de apps en las que confíes.',
  sendNetwork: 'Red',
  sendFee: 'Comisión de red',
  sendFeeFromAccount: 'Se paga desde esta cuenta',
  sendSponsored: 'Patrocinada',
  sendSponsoredNote: 'La app paga la comisión de red.',
  sendCallsLabel: 'Llamadas ({count}), se ejecutan todas o ninguna',
  sendCallN: 'Llamada {index}',
  sendTo: 'Para',
  sendValue: 'Importe',
  sendFunction: 'Función',
  sendData: 'Datos',
  sendConfirm: 'Confirmar',
  sending: 'Enviando…',
  sendPendingTitle: 'Transacción enviada',
  sendPendingBody: 'Puedes cerrar esta ventana; la transacción sigue su curso.',
  sendPendingStatus: 'Esperando a que la red la incluya…',
  sendSlowStatus: 'Está tardando más de lo habitual. Sigue en camino, y esta ventana mostrará cómo termina.',
  sendIncludedTitle: 'Transacción confirmada',
  sendIncludedBody: 'Se ejecutaron todas las llamadas.',
  sendFailedTitle: 'La transacción falló',
  sendFailedBody: 'Ninguna de las llamadas tuvo efecto.',
  sendTxHash: 'Hash de la transacción',
  copyTxHash: 'Copiar hash de la transacción',
  sendAllowance: 'Límite de gasto',
}
