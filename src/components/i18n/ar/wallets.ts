import type { enWallets } from '../en/wallets.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<WalletList/>`. */
export const wallets: Translation<typeof enWallets> = {
  walletsTitle: 'المحافظ',
  walletsEmptyBody: 'أنشئ محفظة للحصول على عناوينك الأولى.',
  createWallet: 'إنشاء محفظة',
  creatingWallet: 'جارٍ إنشاء المحفظة…',
  addAccount: 'إضافة حساب',
  addAccountLabel: 'إضافة حساب على',
  accountsLabel: 'حسابات {wallet}',
  copyAddress: 'نسخ العنوان {address}',
  deleteWallet: 'حذف المحفظة',
  deleteWalletTitle: 'حذف «{wallet}»؟',
  deleteWalletBody: 'سيؤدي هذا إلى إزالة المحفظة وحساباتها من حسابك.',
  deleteWalletNotExported: 'لم تقم بتصدير هذه المحفظة أبدًا. بدون عبارة الاسترداد، ستفقد كل ما فيها نهائيًا.',
  deleteWalletConfirm: 'أدرك أنه لا يمكن التراجع عن ذلك',
  deleteWalletAction: 'حذف المحفظة',
  walletImported: 'مستوردة',
  walletExported: 'محفوظة احتياطيًا',
}
