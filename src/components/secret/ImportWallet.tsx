import { Suspense, useId, useMemo, useRef, useState } from 'react'
import { accountSpecsOf, CHAINS, type Chain } from '../../core/chains.ts'
import { useImportWalletBundle, useInitImportWallet, useSessionState } from '../../react/index.ts'
import { Alert } from '../ui/Alert.tsx'
import { Dialog } from '../ui/Dialog.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { CheckIcon } from '../ui/icons.tsx'
import { Button, Header, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { type FrameEvent, SecretFrame, type SecretFrameHandle, type SecretFrameMode } from './SecretFrame.tsx'
import { type SecretKey, secretUiStrings } from './secretStrings.ts'

export interface ImportWalletProps extends UiOptions {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** Accounts derived for the imported wallet. @default ['ethereum', 'solana'] */
  chains?: readonly Chain[]
  /** See `SecretFrameMode`. @default 'url' */
  frameMode?: SecretFrameMode
  /** Called with the new wallet once imported. */
  onImported?: (result: { walletId: string; addresses: string[] }) => void
}

/**
 * Import a recovery phrase typed inside the service's frame: the frame encrypts it to the
 * service's signed import key; this component only ever sees ciphertext.
 */
export function ImportWallet(props: ImportWalletProps) {
  return (
    <Suspense fallback={null}>
      <ImportWalletInner {...props} />
    </Suspense>
  )
}

function ImportWalletInner({
  open,
  onOpenChange,
  chains,
  frameMode = 'url',
  onImported,
  ...look
}: ImportWalletProps) {
  const ui = useUi(look, secretUiStrings)
  const titleId = useId()
  return (
    <Dialog open={open} onOpenChange={onOpenChange} labelledBy={titleId} ui={ui}>
      <ImportBody
        ui={ui}
        titleId={titleId}
        chains={chains ?? ['ethereum', 'solana']}
        frameMode={frameMode}
        onImported={onImported}
        onClose={() => onOpenChange(false)}
      />
    </Dialog>
  )
}

function ImportBody({
  ui,
  titleId,
  chains,
  frameMode,
  onImported,
  onClose,
}: {
  ui: Ui<SecretKey>
  titleId: string
  chains: readonly Chain[]
  frameMode: SecretFrameMode
  onImported: ImportWalletProps['onImported']
  onClose: () => void
}) {
  const id = useId()
  // Also an ended session: the request then fails with its named error (SessionExpiredError).
  const session = useSessionState((state) => state.sessions[state.activeId ?? ''])
  const init = useInitImportWallet()
  const importBundle = useImportWalletBundle()
  const frame = useRef<SecretFrameHandle>(null)
  const [name, setName] = useState(ui.t('walletNameDefault'))
  const [ready, setReady] = useState(false)
  const [valid, setValid] = useState(false)
  const [encrypting, setEncrypting] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [done, setDone] = useState<{ walletName: string; count: number } | null>(null)
  const labels = useMemo(() => ({ secret: ui.t('importPhraseLabel') }), [ui])

  const onFrameEvent = async (event: FrameEvent) => {
    if (event.type === 'error') {
      setEncrypting(false)
      setError({ code: event.code })
    } else if (event.type === 'input') {
      setValid(event.valid)
      if (error) setError(null)
    } else if (event.type === 'ready') {
      try {
        const { importBundle: bundle } = await init.mutateAsync({ userId: session!.userId })
        frame.current?.post({
          type: 'import-bundle',
          importBundle: bundle,
          organizationId: session!.organizationId,
          userId: session!.userId,
        })
        setReady(true)
      } catch (caught) {
        setError(caught)
      }
    } else if (event.type === 'encrypted') {
      try {
        const walletName = name.trim() || ui.t('walletNameDefault')
        const result = await importBundle.mutateAsync({
          userId: session!.userId,
          walletName,
          encryptedBundle: event.encryptedBundle,
          accounts: accountSpecsOf(chains),
        })
        setDone({ walletName, count: result.addresses.length })
        onImported?.(result)
      } catch (caught) {
        setError(caught)
      } finally {
        setEncrypting(false)
      }
    }
  }

  if (done) {
    return (
      <div className="lk-panel">
        <Header ui={ui} titleId={titleId} title={ui.t('importedTitle')} onClose={onClose} />
        <div className="lk-center">
          <div className="lk-hero" data-tone="success" aria-hidden="true">
            <CheckIcon size={28} />
          </div>
          <p className="lk-muted" role="status" style={{ margin: 0 }}>
            {ui.t('importedBody', { wallet: done.walletName, count: done.count })}
          </p>
        </div>
        <Button block onClick={onClose}>
          {ui.t('done')}
        </Button>
      </div>
    )
  }

  return (
    <div className="lk-panel" data-lk-state={error ? 'error' : ready ? 'ready' : 'loading'}>
      <Header ui={ui} titleId={titleId} title={ui.t('importTitle')} onClose={onClose} />
      <Alert tone="warning">{ui.t('importWarningBody')}</Alert>
      <div className="lk-field">
        <label className="lk-label" htmlFor={`${id}-name`}>
          {ui.t('walletNameLabel')}
        </label>
        <input
          id={`${id}-name`}
          className="lk-input"
          value={name}
          maxLength={64}
          // biome-ignore lint/a11y/noAutofocus: naming the wallet is the first thing to do here
          autoFocus
          data-lk-autofocus=""
          onChange={(event) => setName(event.target.value)}
        />
      </div>
      <SecretFrame
        ref={frame}
        kind="import"
        mode={frameMode}
        ui={ui}
        title={ui.t('importFrameTitle')}
        labels={labels}
        height={176}
        onEvent={(event) => void onFrameEvent(event)}
      />
      <p className="lk-subtle" style={{ margin: 0 }}>
        {ui.t('chainsLabel')}: {chains.map((c) => CHAINS[c].name).join(', ')}
      </p>
      {error ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={error} />
        </Alert>
      ) : null}
      {!ready && !error ? (
        <p className="lk-row lk-muted" role="status" style={{ margin: 0 }}>
          <Spinner />
          {ui.t('frameLoading')}
        </p>
      ) : null}
      <div className="lk-stack" data-gap="sm">
        <Button
          block
          disabled={!ready || !valid}
          loading={encrypting || importBundle.isPending}
          onClick={() => {
            setEncrypting(true)
            setError(null)
            frame.current?.post({ type: 'encrypt' })
          }}
        >
          {encrypting || importBundle.isPending ? ui.t('importing') : ui.t('importAction')}
        </Button>
        <Button block variant="ghost" onClick={onClose}>
          {ui.t('cancel')}
        </Button>
      </div>
    </div>
  )
}
