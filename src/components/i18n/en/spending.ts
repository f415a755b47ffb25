/** English strings of spending limits in words, shared by `<SendTransaction/>`, `<AgentAllowance/>` and `<SpendingLimits/>`. */
export const enSpending = {
  sendEth: '{amount} ETH',
  limitLeftHour: '{amount} left this hour',
  limitLeftDay: '{amount} left today',
  limitLeftWeek: '{amount} left this week',
  limitLeft30Days: '{amount} left in 30 days',
  limitFreesAt: 'frees at {time}',
  limitHourly: 'hourly',
  limitDaily: 'daily',
  limitWeekly: 'weekly',
  limit30Day: '30-day',
  limitAny: 'spending',
  limitSol: '{amount} SOL',
  limitUnits: '{amount} units',
  limitExceeded:
    'This would exceed your {period} limit of {limit}: {used} used, {remaining} left, frees {when}.',
  limitExceededWithFee:
    'This would exceed your {period} limit of {limit}: {used} used, {remaining} left, and with its network fee this send needs up to {requested}. Enough frees {when}.',
  limitExceededWhole: 'This is more than your whole {period} limit of {limit}.',
  limitToken: '{amount} {symbol}',
}
