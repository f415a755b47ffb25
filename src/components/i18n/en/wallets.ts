/** English strings of `<WalletList/>`. */
export const enWallets = {
  walletsTitle: 'Wallets',
  walletsEmptyBody: 'Create a wallet to get your first addresses.',
  createWallet: 'Create wallet',
  creatingWallet: 'Creating wallet…',
  addAccount: 'Add account',
  addAccountLabel: 'Add an account on',
  accountsLabel: 'Accounts of {wallet}',
  copyAddress: 'Copy address {address}',
  deleteWallet: 'Delete wallet',
  deleteWalletTitle: 'Delete “{wallet}”?',
  deleteWalletBody: 'This removes the wallet and its accounts from your account.',
  deleteWalletNotExported:
    'You have never exported this wallet. Without its recovery phrase, anything it holds is lost for good.',
  deleteWalletConfirm: 'I understand this can’t be undone',
  deleteWalletAction: 'Delete wallet',
  walletImported: 'Imported',
  walletExported: 'Backed up',
}
