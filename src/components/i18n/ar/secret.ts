import type { enSecret } from '../en/secret.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<ExportWallet/>` and `<ImportWallet/>`. */
export const secret: Translation<typeof enSecret> = {
  exportTitle: 'تصدير المحفظة',
  exportAccountTitle: 'تصدير المفتاح الخاص',
  exportWarningTitle: 'احتفظ بهذا سرًا',
  exportWarningBody: 'أي شخص يرى {secret} يمكنه أخذ كل ما في هذه المحفظة.',
  exportWarning1: 'لا تشاركها أبدًا، ولا حتى مع فريق الدعم.',
  exportWarning2: 'تأكد من أن لا أحد يرى شاشتك.',
  exportWarning3: 'احفظها دون اتصال، في مكان آمن.',
  exportAcknowledge: 'أفهم ذلك وأنا في مكان خاص',
  exportReveal: 'إظهار {secret}',
  secretMnemonic: 'عبارة الاسترداد',
  secretPrivateKey: 'المفتاح الخاص',
  exportFrameTitle: '{secret} في إطار آمن',
  exportFrameNote: 'تُعرض داخل إطار تقدّمه خدمة المحافظ. هذا التطبيق لا يراها أبدًا.',
  importTitle: 'استيراد محفظة',
  importWarningBody: 'اكتب عبارة الاسترداد في الإطار الآمن أدناه. تُشفَّر هناك ولا تصل إلى هذا التطبيق أبدًا.',
  importFrameTitle: 'عبارة الاسترداد في إطار آمن',
  importPhraseLabel: 'عبارة الاسترداد',
  importAction: 'استيراد المحفظة',
  importing: 'جارٍ الاستيراد…',
  importedTitle: 'تم استيراد المحفظة',
  importedBody: '«{wallet}» جاهزة مع {count} حساب.',
  frameLoading: 'جارٍ فتح الإطار الآمن…',
}
