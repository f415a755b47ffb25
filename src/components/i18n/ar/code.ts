import type { enCode } from '../en/code.ts'
import type { Translation } from '../strings.ts'

/** Arabic: a code typed from an authenticator app or a message: the MFA step-up, enrolment and linking an e-mail. */
export const code: Translation<typeof enCode> = {
  mfaVerify: 'تحقّق',
  mfaCodeFormat: 'أدخل الأرقام الستة التي يعرضها تطبيق المصادقة.',
  mfaCodeWrong: 'هذا الرمز غير صحيح أو سبق استخدامه. انتظر الرمز التالي وحاول مرة أخرى.',
  mfaTooManyTries: 'محاولات كثيرة جدًا. انتظر {minutes} دقيقة وحاول مرة أخرى.',
  mfaContactSent: 'أرسلنا رمزًا إلى {to}. تنتهي صلاحيته خلال دقائق.',
  mfaContactCodeLabel: 'الرمز من الرسالة',
  mfaContactResend: 'أرسل رمزًا جديدًا',
  mfaContactFormat: 'أدخل الأحرف من 6 إلى 9 الواردة في الرسالة.',
  mfaContactWrong: 'هذا الرمز غير صحيح أو انتهت صلاحيته. راجع أحدث رسالة أو أرسل رمزًا جديدًا.',
}
