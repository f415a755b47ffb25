import type { enStepUp } from '../en/stepUp.ts'
import type { Translation } from '../strings.ts'

/** Arabic: the MFA step-up (its lazy chunk). */
export const stepUp: Translation<typeof enStepUp> = {
  mfaTitle: 'أكّد هويتك',
  mfaBodyCode: 'أدخل الرمز المكوّن من 6 أرقام من تطبيق المصادقة للمتابعة.',
  mfaNextCode: 'خطوة أخرى: أدخل الرمز التالي من تطبيقك (كل رمز يُستخدم مرة واحدة).',
  mfaBodyPasskey: 'استخدم مفتاح المرور للمتابعة.',
  mfaCodeLabel: 'رمز المصادقة',
  mfaRecoveryLabel: 'رمز الاسترداد',
  mfaUseRecovery: 'استخدم رمز استرداد بدلًا من ذلك',
  mfaUseCode: 'استخدم رمز تطبيق المصادقة بدلًا من ذلك',
  mfaUsePasskey: 'استخدم مفتاح مرور',
  mfaRecoveryFormat: 'يتكوّن رمز الاسترداد من 10 أحرف وأرقام، مثل ABCDE-FGH23.',
  mfaRecoveryWrong: 'رمز الاسترداد هذا غير صحيح أو سبق استخدامه.',
  mfaEmailMe: 'أرسل لي رمزًا بالبريد الإلكتروني',
  mfaTextMe: 'أرسل لي رمزًا برسالة نصية',
  mfaContactNoContact: 'لا يوجد عنوان أو رقم موثّق لإرسال رمز إليه.',
}
