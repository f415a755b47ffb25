import type { enHidden } from '../en/hidden.ts'
import type { Translation } from '../strings.ts'

/** Arabic: hidden characters, marked. */
export const hidden: Translation<typeof enHidden> = {
  hiddenCharsWarning:
    'يحتوي هذا على أحرف مخفية أو أحرف تغيّر اتجاه النص، وتظهر كرموز U+: قد يُقرأ نصٌّ فيه أحدها على غير حقيقته. تحقّق منه قبل المتابعة.',
  hiddenChar: 'حرف مخفي',
}
