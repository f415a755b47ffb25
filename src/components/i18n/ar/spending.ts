import type { enSpending } from '../en/spending.ts'
import type { Translation } from '../strings.ts'

/** Arabic: spending limits in words, shared by `<SendTransaction/>`, `<AgentAllowance/>` and `<SpendingLimits/>`. */
export const spending: Translation<typeof enSpending> = {
  sendEth: '{amount} ETH',
  limitLeftHour: 'يتبقى {amount} في هذه الساعة',
  limitLeftDay: 'يتبقى {amount} اليوم',
  limitLeftWeek: 'يتبقى {amount} هذا الأسبوع',
  limitLeft30Days: 'يتبقى {amount} خلال 30 يومًا',
  limitFreesAt: 'يتحرر عند {time}',
  limitHourly: 'لكل ساعة',
  limitDaily: 'اليومي',
  limitWeekly: 'الأسبوعي',
  limit30Day: 'لكل 30 يومًا',
  limitAny: 'للإنفاق',
  limitSol: '{amount} SOL',
  limitUnits: '{amount} وحدة',
  limitExceeded: 'سيتجاوز هذا حدّك {period} البالغ {limit}: استُخدم {used}، ويتبقى {remaining}، ويتحرر {when}.',
  limitExceededWithFee:
    'سيتجاوز هذا حدّك {period} البالغ {limit}: استُخدم {used}، ويتبقى {remaining}، ويحتاج هذا الإرسال مع رسوم الشبكة إلى ما يصل إلى {requested}. ويتحرر ما يكفي {when}.',
  limitExceededWhole: 'هذا وحده أكبر من حدّك {period} البالغ {limit}.',
  limitToken: '{amount} {symbol}',
}
