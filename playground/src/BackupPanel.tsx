import { ExportWallet, ImportWallet } from 'latchkey'
import { useCallback, useState } from 'react'
import { EthereumAccountPicker, type PickedAccount } from './EthereumAccountPicker.tsx'

type Open = 'wallet' | 'account' | 'import' | null

/** Export (recovery phrase or one private key) and import, through Latchkey's isolated-frame dialogs. */
export function BackupPanel() {
  const [account, setAccount] = useState<PickedAccount | null>(null)
  const onAccount = useCallback((picked: PickedAccount | null) => setAccount(picked), [])
  const [open, setOpen] = useState<Open>(null)
  const [imported, setImported] = useState<{ walletId: string; addresses: string[] } | null>(null)
  const close = (next: boolean) => {
    if (!next) setOpen(null)
  }
  return (
    <section className="pg-card" aria-labelledby="pg-backup-title">
      <h2 id="pg-backup-title">Back up and restore</h2>
      <p className="pg-card-lead">
        Secrets are shown and typed inside a frame served by the wallet service; this page never sees them.
      </p>
      <EthereumAccountPicker onChange={onAccount} />
      <div className="pg-row">
        <button type="button" className="pg-button" disabled={!account} onClick={() => setOpen('wallet')}>
          Export recovery phrase
        </button>
        <button type="button" className="pg-button" disabled={!account} onClick={() => setOpen('account')}>
          Export private key
        </button>
        <button type="button" className="pg-button" onClick={() => setOpen('import')}>
          Import wallet
        </button>
      </div>
      {imported ? (
        <p className="pg-muted" aria-live="polite">
          Imported {imported.addresses.length} account(s): <code>{imported.addresses[0]}</code>
        </p>
      ) : null}
      <ExportWallet open={open === 'wallet'} onOpenChange={close} walletId={account?.walletId} />
      <ExportWallet open={open === 'account'} onOpenChange={close} address={account?.address} />
      <ImportWallet open={open === 'import'} onOpenChange={close} onImported={setImported} />
    </section>
  )
}
