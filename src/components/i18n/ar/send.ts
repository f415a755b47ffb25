import type { enSend } from '../en/send.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<SendTransaction/>`. */
export const send: Translation<typeof enSend> = {
  sendTitle: 'مراجعة المعاملة',
  sendDescription: 'راجع كل استدعاء قبل التأكيد. لا تؤكد إلا المعاملات من التطبيقات التي تثق بها.',
  sendNetwork: 'الشبكة',
  sendFee: 'رسوم الشبكة',
  sendFeeFromAccount: 'تُدفع من هذا الحساب',
  sendSponsored: 'مدفوعة من التطبيق',
  sendSponsoredNote: 'يدفع التطبيق رسوم الشبكة.',
  sendCallsLabel: 'الاستدعاءات ({count})، تُنفَّذ كلها أو لا يُنفَّذ أي منها',
  sendCallN: 'الاستدعاء {index}',
  sendTo: 'إلى',
  sendValue: 'المبلغ',
  sendFunction: 'الدالة',
  sendData: 'البيانات',
  sendConfirm: 'تأكيد',
  sending: 'جارٍ الإرسال…',
  sendPendingTitle: 'أُرسلت المعاملة',
  sendPendingBody: 'يمكنك إغلاق هذه النافذة؛ ستستمر المعاملة.',
  sendPendingStatus: 'في انتظار أن تُدرجها الشبكة…',
  sendSlowStatus:
    'يستغرق الأمر وقتًا أطول من المعتاد. لا تزال المعاملة في طريقها، وستعرض هذه النافذة نتيجتها.',
  sendIncludedTitle: 'تأكدت المعاملة',
  sendIncludedBody: 'نُفِّذت كل الاستدعاءات.',
  sendFailedTitle: 'فشلت المعاملة',
  sendFailedBody: 'لم يُنفَّذ أي من الاستدعاءات.',
  sendTxHash: 'معرّف المعاملة (hash)',
  copyTxHash: 'نسخ معرّف المعاملة',
  sendAllowance: 'حد الإنفاق',
}
