import type { enSecurity } from '../en/security.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<SecuritySettings/>`' panel. */
export const security: Translation<typeof enSecurity> = {
  secTitle: 'الأمان',
  secDescription: 'تحمي العوامل الثانية عمليات التصدير والإرسال الكبير والتغييرات على إعدادات أمانك.',
  secFactors: 'عواملك',
  secPasskeys: 'مفاتيح المرور',
  secPasskeyCount: '{count} مسجّلة',
  secPasskeyNone: 'لا شيء بعد. أضف واحدًا من ملفك الشخصي.',
  secTotp: 'تطبيق المصادقة',
  secTotpUnconfirmed: 'غير مؤكَّد',
  secTotpRemove: 'إزالة',
  secTotpRemoveLabel: 'إزالة تطبيق المصادقة {name}',
  secTotpRemoved: 'أُزيل تطبيق المصادقة {name}.',
  secTotpLast:
    'تطبيق المصادقة هذا هو الطريقة الوحيدة المتبقية لإثبات إحدى قواعدك. أوقف تلك القاعدة أولاً، أو أضف مفتاح مرور أو تطبيق مصادقة آخر.',
  secTotpAdd: 'إضافة تطبيق مصادقة',
  secRecovery: 'رموز الاسترداد',
  secRecoveryLeft: 'متبقٍّ {count}',
  secRecoveryNone: 'لا شيء',
  secRecoveryCreate: 'إنشاء رموز الاسترداد',
  secRecoveryRegenerate: 'إعادة الإنشاء',
  secRecoveryRegenerateLabel: 'إعادة إنشاء رموز الاسترداد (تتوقف الرموز القديمة عن العمل)',
  secCodesTitle: 'رموز الاسترداد الخاصة بك',
  secCodesBody:
    'يعمل كل رمز مرة واحدة، عندما لا تستطيع استخدام تطبيق المصادقة. احفظها في مكان آمن الآن: لن تظهر مرة أخرى.',
  secCodesCopy: 'نسخ الرموز',
  secCodesDownload: 'تنزيل (.txt)',
  secCodesFileHeader: 'رموز الاسترداد. يعمل كل رمز مرة واحدة. احفظها في مكان آمن.',
  secCodesDone: 'حفظتها',
  secEnrolDone: 'تطبيق المصادقة مفعَّل. أنشئ رموز استرداد تحسّبًا لفقدانه.',
  secRules: 'متى يُطلب عامل ثانٍ',
  secRuleExports: 'يتطلب تصدير محفظة أو مفتاح عاملًا ثانيًا',
  secRuleSends: 'يتطلب الإرسال فوق مبلغ معيّن مفتاح مرور',
  secRuleAmount: 'المبلغ (ETH)',
  secRuleAmountHint:
    'تُحتسب الرسوم: إذا تجاوزت قيمة الإرسال أو المعاملة الموقَّعة مع أقصى ما قد تدفعه من رسوم هذا المبلغ، يُطلب مفتاح المرور. كما تطلبه عمليات الإرسال على سولانا، وكل توقيع ليس رسالة أو بيانات منظَّمة على إيثريوم، أيًّا كان المبلغ.',
  secRuleSave: 'حفظ',
  secRuleSaved: 'تم الحفظ.',
  secRuleAmountInvalid: 'أدخل مبلغًا أكبر من 0 بحد أقصى 18 منزلة عشرية.',
  secRuleAmountAmbiguous: '«{typed}» قد يعني {whole} أو {point}. اكتب المبلغ دون فاصل الآلاف.',
  secRuleAmountTooLarge: 'هذا المبلغ كبير جدًا. أدخل مبلغًا أصغر.',
  secRuleNeedsFactor: 'أضف تطبيق مصادقة أو مفتاح مرور أولًا: هذه القاعدة تطلب أحدهما.',
  secRuleNeedsPasskey: 'أضف مفتاح مرور أولًا: هذه القاعدة تطلبه.',
  secRuleOther: 'قاعدة أخرى',
}
