import { useWalletAccounts, useWallets } from 'latchkey'
import { useEffect, useId, useState } from 'react'

export interface PickedAccount {
  walletId: string
  address: string
}

/**
 * Picks one Ethereum account among the signed-in user's wallets (the demos sign and send from it).
 * Calls `onChange` with `null` while there is none.
 */
export function EthereumAccountPicker({ onChange }: { onChange: (account: PickedAccount | null) => void }) {
  const wallets = useWallets()
  const [walletId, setWalletId] = useState<string>('')
  const walletList = wallets.data?.wallets ?? []
  const effectiveWalletId = walletList.some((w) => w.walletId === walletId)
    ? walletId
    : (walletList[0]?.walletId ?? '')
  const accounts = useWalletAccounts()
  const ethereum = (accounts.data?.accounts ?? []).filter(
    (a) => a.walletId === effectiveWalletId && a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM',
  )
  const [address, setAddress] = useState('')
  const effectiveAddress = ethereum.some((a) => a.address === address)
    ? address
    : (ethereum[0]?.address ?? '')
  const walletSelect = useId()
  const accountSelect = useId()

  useEffect(() => {
    onChange(effectiveAddress ? { walletId: effectiveWalletId, address: effectiveAddress } : null)
  }, [effectiveAddress, effectiveWalletId, onChange])

  if (wallets.isPending) return <p className="pg-muted">Loading wallets…</p>
  if (walletList.length === 0)
    return <p className="pg-muted">Create a wallet above to get an Ethereum account.</p>
  return (
    <div className="pg-picker">
      <label className="pg-field" htmlFor={walletSelect}>
        <span>Wallet</span>
        <select
          id={walletSelect}
          className="pg-select"
          value={effectiveWalletId}
          onChange={(event) => setWalletId(event.target.value)}
        >
          {walletList.map((wallet) => (
            <option key={wallet.walletId} value={wallet.walletId}>
              {wallet.walletName}
            </option>
          ))}
        </select>
      </label>
      <label className="pg-field" htmlFor={accountSelect}>
        <span>Ethereum account</span>
        <select
          id={accountSelect}
          className="pg-select pg-mono"
          value={effectiveAddress}
          onChange={(event) => setAddress(event.target.value)}
          disabled={ethereum.length === 0}
        >
          {ethereum.length === 0 ? <option value="">No Ethereum account in this wallet</option> : null}
          {ethereum.map((account) => (
            <option key={account.address} value={account.address} title={account.address}>
              {`${account.address.slice(0, 8)}…${account.address.slice(-6)}`}
            </option>
          ))}
        </select>
      </label>
    </div>
  )
}
