import type { enProfile } from '../en/profile.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<UserProfile/>`. */
export const profile: Translation<typeof enProfile> = {
  profileTitle: 'الملف الشخصي',
  nameLabel: 'الاسم',
  notSet: 'غير محدد',
  passkeysTitle: 'مفاتيح المرور',
  passkeysEmpty: 'لا توجد مفاتيح مرور بعد.',
  removePasskey: 'إزالة مفتاح المرور {name}',
  providersTitle: 'الحسابات المرتبطة',
  providersEmpty: 'لا توجد حسابات مرتبطة.',
  sessionsTitle: 'الجلسات النشطة',
  sessionsEmpty: 'لا توجد جلسات نشطة.',
  thisSession: 'هذه الجلسة',
  useSession: 'تبديل',
  sessionExpiresAt: 'تنتهي {time}',
  logOutSession: 'تسجيل الخروج من الجلسة {name}',
  nameSaved: 'تم حفظ الاسم.',
}
