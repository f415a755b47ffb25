import type { enLogins } from '../en/logins.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<LinkedLogins/>`. */
export const logins: Translation<typeof enLogins> = {
  loginsTitle: 'طرق تسجيل الدخول',
  loginsEmpty: 'لا توجد طريقة مرتبطة لتسجيل الدخول.',
  loginPasskey: 'مفتاح المرور',
  loginWallet: 'المحفظة',
  loginApiKey: 'مفتاح API',
  loginUnlink: 'إلغاء الربط',
  loginUnlinkLabel: 'إلغاء ربط {name}',
  loginUnlinkConfirm: 'هل تريد إلغاء ربط {name}؟ لن تتمكن من تسجيل الدخول به بعد الآن.',
  loginUnlinkYes: 'نعم، ألغِ الربط',
  loginUnlinked: 'تم إلغاء ربط {name}.',
  loginLastWayIn: 'هذه آخر طريقة لديك لتسجيل الدخول، لذا لا يمكن إلغاء ربطها. اربط طريقة أخرى أولًا.',
  loginLinkEmail: 'ربط بريد إلكتروني',
  loginSendCode: 'إرسال الرمز',
  loginLinked: 'تم ربط {name}.',
  loginLinkOAuth: 'ربط {provider}',
  loginOAuthTaken: 'حساب {provider} هذا مرتبط بالفعل بحساب آخر. سجّل الدخول به لاستخدام ذلك الحساب.',
  loginOAuthBlocked: 'حُظرت نافذة {provider}. اسمح بالنوافذ المنبثقة ثم حاول مجددًا.',
  loginOAuthBlockedBody: 'حظر متصفحك نافذة {provider}. افتحها من هنا بدلًا من ذلك.',
  loginOAuthOpen: 'افتح نافذة {provider}',
}
