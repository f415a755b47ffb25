import type { enEnrolment } from '../en/enrolment.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<SecuritySettings/>`' authenticator enrolment (its lazy chunk). */
export const enrolment: Translation<typeof enEnrolment> = {
  secEnrolTitle: 'امسح رمز QR هذا',
  secEnrolBody: 'امسحه بتطبيق المصادقة، أو أدخل المفتاح يدويًا.',
  secEnrolQr: 'رمز QR لمفتاح تطبيق المصادقة',
  secEnrolKey: 'المفتاح',
  secEnrolLink: 'رابط الإعداد',
  secEnrolCopyKey: 'نسخ المفتاح',
  secEnrolCopyLink: 'نسخ رابط الإعداد',
  secEnrolConfirmTitle: 'أدخل رمزًا للإنهاء',
  secEnrolConfirm: 'تأكيد',
  secEnrolStarting: 'جارٍ تجهيز مفتاح…',
}
