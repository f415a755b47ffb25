import type { enSpending } from '../en/spending.ts'
import type { Translation } from '../strings.ts'

/** Spanish: spending limits in words, shared by `<SendTransaction/>`, `<AgentAllowance/>` and `<SpendingLimits/>`. */
export const spending: Translation<typeof enSpending> = {
  sendEth: '{amount} ETH',
  limitLeftHour: 'Quedan {amount} esta hora',
  limitLeftDay: 'Quedan {amount} hoy',
  limitLeftWeek: 'Quedan {amount} esta semana',
  limitLeft30Days: 'Quedan {amount} en 30 días',
  limitFreesAt: 'se libera a las {time}',
  limitHourly: 'por hora',
  limitDaily: 'diario',
  limitWeekly: 'semanal',
  limit30Day: 'de 30 días',
  limitAny: 'de gasto',
  limitSol: '{amount} SOL',
  limitUnits: '{amount} unidades',
  limitExceeded:
    'Esto superaría tu límite {period} de {limit}: {used} usados, quedan {remaining}, se libera {when}.',
  limitExceededWithFee:
    'Esto superaría tu límite {period} de {limit}: {used} usados, quedan {remaining}, y con su comisión de red este envío necesita hasta {requested}. Se libera lo suficiente {when}.',
  limitExceededWhole: 'Esto supera por sí solo tu límite {period} de {limit}.',
  limitToken: '{amount} {symbol}',
}
