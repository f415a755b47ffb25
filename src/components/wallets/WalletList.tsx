import type { Wallet, WalletAccount } from '@latchkey/protocol'
import { type FormEvent, Suspense, useId, useState } from 'react'
import { CHAINS, type Chain } from '../../core/chains.ts'
import {
  useCreateWallet,
  useCreateWalletAccounts,
  useDeleteWallets,
  useWalletAccounts,
  useWallets,
} from '../../react/index.ts'
import { joinStrings } from '../i18n/joinStrings.ts'
import { walletsStrings } from '../i18n/sections/wallets.ts'
import { Alert } from '../ui/Alert.tsx'
import { CopyButton } from '../ui/CopyButton.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { LoadFailed, Loading } from '../ui/feedback.tsx'
import { PlusIcon, TrashIcon, WalletIcon } from '../ui/icons.tsx'
import { Button, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { uiStrings } from '../ui/uiStrings.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { networkOf, shortAddress } from './networkOf.ts'

const strings = /* @__PURE__ */ joinStrings(uiStrings, walletsStrings)
type Keys = keyof typeof strings.en

export interface WalletListProps extends UiOptions {
  /**
   * Chains offered when creating a wallet (the first two are preselected) and when adding an account.
   * @default ['ethereum', 'solana', 'bitcoin']
   */
  chains?: readonly Chain[]
  /** Hide the create / add / delete controls. @default false */
  readOnly?: boolean
  className?: string
}

/** The signed-in user's wallets and accounts: copy an address, create a wallet, add an account, delete. */
export function WalletList(props: WalletListProps) {
  return (
    <Suspense fallback={null}>
      <WalletListInner {...props} />
    </Suspense>
  )
}

function WalletListInner({
  chains = ['ethereum', 'solana', 'bitcoin'],
  readOnly = false,
  className,
  ...look
}: WalletListProps) {
  const ui = useUi(look, strings)
  const titleId = useId()
  const wallets = useWallets()
  const accounts = useWalletAccounts()
  const [creating, setCreating] = useState(false)
  const list = wallets.data?.wallets ?? []
  const byWallet = new Map<string, WalletAccount[]>()
  for (const account of accounts.data?.accounts ?? [])
    byWallet.set(account.walletId, [...(byWallet.get(account.walletId) ?? []), account])

  let body: React.ReactNode
  if (wallets.isPending) {
    body = <Loading ui={ui} />
  } else if (wallets.isError) {
    body = <LoadFailed ui={ui} error={wallets.error} retry={() => void wallets.refetch()} />
  } else if (list.length === 0 && !creating) {
    body = (
      <div className="lk-center" style={{ paddingBlock: 16 }}>
        <div className="lk-hero" aria-hidden="true">
          <WalletIcon size={26} />
        </div>
        <strong className="lk-strong">{ui.t('walletsEmptyTitle')}</strong>
        <span className="lk-muted">{ui.t('walletsEmptyBody')}</span>
        {readOnly ? null : (
          <Button onClick={() => setCreating(true)}>
            <PlusIcon />
            {ui.t('createWallet')}
          </Button>
        )}
      </div>
    )
  } else {
    body = (
      <div className="lk-stack">
        {list.map((wallet) => (
          <WalletItem
            key={wallet.walletId}
            ui={ui}
            wallet={wallet}
            accounts={byWallet.get(wallet.walletId) ?? []}
            accountsPending={accounts.isPending}
            chains={chains}
            readOnly={readOnly}
          />
        ))}
      </div>
    )
  }

  return (
    <section
      {...ui.rootProps}
      className={`${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`}
      aria-labelledby={titleId}
    >
      <div className="lk-row" data-justify="between">
        <h2 className="lk-card-title" id={titleId}>
          {ui.t('walletsTitle')}
        </h2>
        {readOnly || creating || list.length === 0 ? null : (
          <Button size="sm" variant="secondary" onClick={() => setCreating(true)}>
            <PlusIcon />
            {ui.t('createWallet')}
          </Button>
        )}
      </div>
      {creating ? <CreateWalletForm ui={ui} chains={chains} onClose={() => setCreating(false)} /> : null}
      {body}
    </section>
  )
}

function CreateWalletForm({
  ui,
  chains,
  onClose,
}: {
  ui: Ui<Keys>
  chains: readonly Chain[]
  onClose: () => void
}) {
  const id = useId()
  const create = useCreateWallet()
  const [name, setName] = useState(ui.t('walletNameDefault'))
  const [picked, setPicked] = useState<Chain[]>(() => chains.slice(0, 2))
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    try {
      await create.mutateAsync({ walletName: name.trim() || ui.t('walletNameDefault'), chains: picked })
      onClose()
    } catch {
      // shown from create.error
    }
  }
  return (
    <form className="lk-wallet" onSubmit={submit} aria-label={ui.t('createWallet')}>
      <div className="lk-field">
        <label className="lk-label" htmlFor={`${id}-name`}>
          {ui.t('walletNameLabel')}
        </label>
        <input
          id={`${id}-name`}
          className="lk-input"
          value={name}
          maxLength={64}
          // biome-ignore lint/a11y/noAutofocus: the form opens on request; naming is its first task
          autoFocus
          onChange={(event) => setName(event.target.value)}
        />
      </div>
      <fieldset className="lk-field" style={{ border: 0, margin: 0, padding: 0 }}>
        <legend className="lk-label" style={{ marginBlockEnd: 6 }}>
          {ui.t('chainsLabel')}
        </legend>
        <div className="lk-row" data-wrap="">
          {chains.map((chain) => (
            <label key={chain} className="lk-checkbox" style={{ marginInlineEnd: 12 }}>
              <input
                type="checkbox"
                checked={picked.includes(chain)}
                onChange={(event) =>
                  setPicked((p) => (event.target.checked ? [...p, chain] : p.filter((c) => c !== chain)))
                }
              />
              {CHAINS[chain].name}
            </label>
          ))}
        </div>
      </fieldset>
      {create.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={create.error} />
        </Alert>
      ) : null}
      <div className="lk-row" style={{ justifyContent: 'flex-end' }}>
        <Button variant="ghost" onClick={onClose} disabled={create.isPending}>
          {ui.t('cancel')}
        </Button>
        <Button type="submit" loading={create.isPending} disabled={picked.length === 0}>
          {create.isPending ? ui.t('creatingWallet') : ui.t('createWallet')}
        </Button>
      </div>
    </form>
  )
}

function WalletItem({
  ui,
  wallet,
  accounts,
  accountsPending,
  chains,
  readOnly,
}: {
  ui: Ui<Keys>
  wallet: Wallet
  accounts: WalletAccount[]
  accountsPending: boolean
  chains: readonly Chain[]
  readOnly: boolean
}) {
  const id = useId()
  const addAccounts = useCreateWalletAccounts()
  const [chain, setChain] = useState<Chain>(chains[0] ?? 'ethereum')
  const [confirming, setConfirming] = useState(false)
  return (
    <article className="lk-wallet" aria-labelledby={`${id}-name`}>
      <div className="lk-row" data-justify="between">
        <div className="lk-row lk-grow">
          <h3 className="lk-strong" id={`${id}-name`} style={{ margin: 0, fontSize: 15 }}>
            {wallet.walletName}
          </h3>
          {wallet.imported ? <span className="lk-badge">{ui.t('walletImported')}</span> : null}
          {wallet.exported ? (
            <span className="lk-badge" data-tone="success">
              {ui.t('walletExported')}
            </span>
          ) : null}
        </div>
        {readOnly || confirming ? null : (
          <button
            type="button"
            className="lk-icon-button"
            aria-label={`${ui.t('deleteWallet')}: ${wallet.walletName}`}
            onClick={() => setConfirming(true)}
          >
            <TrashIcon />
          </button>
        )}
      </div>
      {confirming ? <DeleteConfirm ui={ui} wallet={wallet} onClose={() => setConfirming(false)} /> : null}
      {accountsPending ? (
        <p className="lk-row lk-muted" style={{ margin: 0 }}>
          <Spinner />
          {ui.t('loading')}
        </p>
      ) : (
        <ul className="lk-list" aria-label={ui.t('accountsLabel', { wallet: wallet.walletName })}>
          {accounts.map((account) => (
            <li key={account.address}>
              <span className="lk-badge" data-tone="accent">
                {networkOf(account.addressFormat)}
              </span>
              <span className="lk-mono lk-grow lk-address" title={account.address}>
                <span aria-hidden="true">{shortAddress(account.address)}</span>
                <span className="lk-visually-hidden">{account.address}</span>
              </span>
              <CopyButton
                ui={ui}
                text={account.address}
                label={ui.t('copyAddress', { address: account.address })}
              />
            </li>
          ))}
        </ul>
      )}
      {readOnly ? null : (
        <div className="lk-row" data-wrap="">
          <label className="lk-visually-hidden" htmlFor={`${id}-chain`}>
            {ui.t('addAccountLabel')}
          </label>
          <select
            id={`${id}-chain`}
            className="lk-select"
            style={{ inlineSize: 'auto', minBlockSize: 32, fontSize: 14 }}
            value={chain}
            onChange={(event) => setChain(event.target.value as Chain)}
          >
            {chains.map((c) => (
              <option key={c} value={c}>
                {CHAINS[c].name}
              </option>
            ))}
          </select>
          <Button
            size="sm"
            variant="secondary"
            loading={addAccounts.isPending}
            onClick={() => addAccounts.mutate({ walletId: wallet.walletId, chains: [chain] })}
          >
            <PlusIcon />
            {ui.t('addAccount')}
          </Button>
        </div>
      )}
      {addAccounts.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={addAccounts.error} />
        </Alert>
      ) : null}
    </article>
  )
}

function DeleteConfirm({ ui, wallet, onClose }: { ui: Ui<Keys>; wallet: Wallet; onClose: () => void }) {
  const id = useId()
  const remove = useDeleteWallets()
  const [understood, setUnderstood] = useState(false)
  return (
    <div className="lk-stack">
      <Alert
        tone="warning"
        title={<span id={`${id}-title`}>{ui.t('deleteWalletTitle', { wallet: wallet.walletName })}</span>}
      >
        {wallet.exported ? ui.t('deleteWalletBody') : ui.t('deleteWalletNotExported')}
      </Alert>
      {wallet.exported ? null : (
        <label className="lk-checkbox">
          <input
            type="checkbox"
            checked={understood}
            onChange={(event) => setUnderstood(event.target.checked)}
          />
          {ui.t('deleteWalletConfirm')}
        </label>
      )}
      {remove.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={remove.error} />
        </Alert>
      ) : null}
      <div className="lk-row" style={{ justifyContent: 'flex-end' }}>
        <Button variant="ghost" onClick={onClose} disabled={remove.isPending}>
          {ui.t('cancel')}
        </Button>
        <Button
          variant="danger"
          loading={remove.isPending}
          disabled={!wallet.exported && !understood}
          onClick={() =>
            remove.mutate(
              { walletIds: [wallet.walletId], deleteWithoutExport: !wallet.exported },
              { onSuccess: onClose },
            )
          }
        >
          {ui.t('deleteWalletAction')}
        </Button>
      </div>
    </div>
  )
}
