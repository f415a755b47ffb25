import type { enSign } from '../en/sign.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<SignMessageDialog/>`. */
export const sign: Translation<typeof enSign> = {
  signTitle: 'طلب توقيع',
  signDescription: 'وقّع فقط رسائل التطبيقات التي تثق بها. التوقيع لا يكلّف شيئًا.',
  signMessageLabel: 'الرسالة',
  signAction: 'توقيع',
  signing: 'في انتظار التوقيع…',
  signatureLabel: 'التوقيع',
  signedTitle: 'تم توقيع الرسالة',
  copySignature: 'نسخ التوقيع',
  signRefusedTransaction: 'هذه الرسالة معاملة: توقيعها قد ينقل أموالك، لذلك لم تُوقَّع.',
  signRefusedNoFormat: 'شبكة هذا الحساب لا تدعم توقيع الرسائل هنا، لذلك لم يُوقَّع شيء.',
}
