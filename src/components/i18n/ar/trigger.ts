import type { enTrigger } from '../en/trigger.ts'
import type { Translation } from '../strings.ts'

/** Arabic: what `<AuthModal/>` renders before its body loads: the trigger, the signed-in badge and the dialog shell (its header and loading state), at start-up. */
export const trigger: Translation<typeof enTrigger> = {
  close: 'إغلاق',
  back: 'رجوع',
  loading: 'جارٍ التحميل…',
  signIn: 'تسجيل الدخول',
  signInTitle: 'تسجيل الدخول',
  logOut: 'تسجيل الخروج',
  sessionActive: 'تم تسجيل الدخول',
  sessionExpiredSignIn: 'انتهت الجلسة — سجّل الدخول مرة أخرى',
}
