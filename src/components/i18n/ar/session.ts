import type { enSession } from '../en/session.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<SessionStatus/>`. */
export const session: Translation<typeof enSession> = {
  sessionSignedOut: 'لم يتم تسجيل الدخول',
  sessionExpiring: 'الجلسة على وشك الانتهاء',
  sessionExpired: 'انتهت الجلسة',
  sessionStorageLost: 'تم مسح مفاتيح الجلسة',
  sessionExpiresIn: 'تنتهي خلال {time}',
  sessionRefresh: 'البقاء متصلًا',
  sessionRefreshing: 'جارٍ التجديد…',
  sessionSignInAgain: 'تسجيل الدخول مجددًا',
  sessionReadOnly: 'للقراءة فقط',
}
