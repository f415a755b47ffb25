import type { enWallets } from '../en/wallets.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<WalletList/>`. */
export const wallets: Translation<typeof enWallets> = {
  walletsTitle: 'Billeteras',
  walletsEmptyBody: 'Crea una billetera para obtener tus primeras direcciones.',
  createWallet: 'Crear billetera',
  creatingWallet: 'Creando billetera…',
  addAccount: 'Añadir cuenta',
  addAccountLabel: 'Añadir una cuenta en',
  accountsLabel: 'Cuentas de {wallet}',
  copyAddress: 'Copiar la dirección {address}',
  deleteWallet: 'Eliminar billetera',
  deleteWalletTitle: '¿Eliminar «{wallet}»?',
  deleteWalletBody: 'Esto quita la billetera y sus cuentas de tu cuenta.',
  deleteWalletNotExported:
    'Nunca has exportado esta billetera. Sin su frase de recuperación, lo que contiene se perderá para siempre.',
  deleteWalletConfirm: 'Entiendo que no se puede deshacer',
  deleteWalletAction: 'Eliminar billetera',
  walletImported: 'Importada',
  walletExported: 'Con copia',
}
