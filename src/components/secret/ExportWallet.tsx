import { Suspense, useId, useMemo, useRef, useState } from 'react'
import type { MfaRequiredError } from '../../core/errors.ts'
import { useExportWalletAccountBundle, useExportWalletBundle, useSessionState } from '../../react/index.ts'
import { isMfaRequired, LazyStepUp } from '../mfa/LazyStepUp.tsx'
import { Alert } from '../ui/Alert.tsx'
import { Dialog } from '../ui/Dialog.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { LockIcon } from '../ui/icons.tsx'
import { Button, Header, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { type FrameEvent, SecretFrame, type SecretFrameHandle, type SecretFrameMode } from './SecretFrame.tsx'
import { type SecretKey, secretUiStrings } from './secretStrings.ts'

export interface ExportWalletProps extends UiOptions {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** Export this wallet's recovery phrase… */
  walletId?: string
  /** …or this account's private key. */
  address?: string
  /** See `SecretFrameMode`. @default 'url' */
  frameMode?: SecretFrameMode
}

/**
 * Export behind a warning screen. The secret is decrypted and shown inside the service's frame
 * (its own non-extractable key); this component only ever handles the encrypted bundle.
 */
export function ExportWallet(props: ExportWalletProps) {
  return (
    <Suspense fallback={null}>
      <ExportWalletInner {...props} />
    </Suspense>
  )
}

function ExportWalletInner({
  open,
  onOpenChange,
  walletId,
  address,
  frameMode = 'url',
  ...look
}: ExportWalletProps) {
  const ui = useUi(look, secretUiStrings)
  const titleId = useId()
  return (
    <Dialog open={open} onOpenChange={onOpenChange} labelledBy={titleId} ui={ui}>
      <ExportBody
        ui={ui}
        titleId={titleId}
        walletId={walletId}
        address={address}
        frameMode={frameMode}
        onClose={() => onOpenChange(false)}
      />
    </Dialog>
  )
}

export function SecretWarning({ ui, secret }: { ui: Ui<SecretKey>; secret: string }) {
  return (
    <Alert tone="warning" title={ui.t('exportWarningTitle')}>
      {ui.t('exportWarningBody', { secret })}
      <ul>
        <li>{ui.t('exportWarning1')}</li>
        <li>{ui.t('exportWarning2')}</li>
        <li>{ui.t('exportWarning3')}</li>
      </ul>
    </Alert>
  )
}

function ExportBody({
  ui,
  titleId,
  walletId,
  address,
  frameMode,
  onClose,
}: {
  ui: Ui<SecretKey>
  titleId: string
  walletId: string | undefined
  address: string | undefined
  frameMode: SecretFrameMode
  onClose: () => void
}) {
  // Also an ended session: the request then fails with its named error (SessionExpiredError).
  const session = useSessionState((state) => state.sessions[state.activeId ?? ''])
  const exportWallet = useExportWalletBundle()
  const exportAccount = useExportWalletAccountBundle()
  const frame = useRef<SecretFrameHandle>(null)
  const [acknowledged, setAcknowledged] = useState(false)
  const [stage, setStage] = useState<'warning' | 'loading' | 'shown'>('warning')
  const [error, setError] = useState<unknown>(null)
  const [challenge, setChallenge] = useState<MfaRequiredError<{ exportBundle: string }> | null>(null)
  const isKey = !walletId && Boolean(address)
  const secret = isKey ? ui.t('secretPrivateKey') : ui.t('secretMnemonic')
  const labels = useMemo(() => ({ secret }), [secret])

  const onFrameEvent = async (event: FrameEvent) => {
    if (event.type === 'error') {
      setError({ code: event.code })
      return
    }
    if (event.type === 'shown') return setStage('shown')
    if (event.type !== 'ready' || !event.targetPublicKey) return
    try {
      const bundle = isKey
        ? (await exportAccount.mutateAsync({ address: address!, targetPublicKey: event.targetPublicKey }))
            .exportBundle
        : (await exportWallet.mutateAsync({ walletId: walletId!, targetPublicKey: event.targetPublicKey }))
            .exportBundle
      postBundle(bundle)
    } catch (caught) {
      // An MFA policy holds the export: ask for the factor, then show the secret (issue 38).
      if (isMfaRequired(caught)) setChallenge(caught as MfaRequiredError<{ exportBundle: string }>)
      else setError(caught)
    }
  }
  const postBundle = (bundle: string) =>
    frame.current?.post({
      type: 'export-bundle',
      exportBundle: bundle,
      organizationId: session?.organizationId,
      secret: isKey ? 'privateKey' : 'mnemonic',
    })

  return (
    <div className="lk-panel" data-lk-state={error ? 'error' : stage}>
      <Header
        ui={ui}
        titleId={titleId}
        title={isKey ? ui.t('exportAccountTitle') : ui.t('exportTitle')}
        onClose={onClose}
      />
      {stage === 'warning' ? (
        <>
          <div className="lk-hero" data-tone="warning" aria-hidden="true">
            <LockIcon size={26} />
          </div>
          <SecretWarning ui={ui} secret={secret} />
          <label className="lk-checkbox">
            <input
              type="checkbox"
              // biome-ignore lint/a11y/noAutofocus: the acknowledgement is this screen's first step
              autoFocus
              data-lk-autofocus=""
              checked={acknowledged}
              onChange={(event) => setAcknowledged(event.target.checked)}
            />
            {ui.t('exportAcknowledge')}
          </label>
          <div className="lk-stack" data-gap="sm">
            <Button block disabled={!acknowledged} onClick={() => setStage('loading')}>
              {ui.t('exportReveal', { secret })}
            </Button>
            <Button block variant="ghost" onClick={onClose}>
              {ui.t('cancel')}
            </Button>
          </div>
        </>
      ) : (
        <>
          <p className="lk-subtle" style={{ margin: 0 }}>
            {ui.t('exportFrameNote')}
          </p>
          {challenge ? (
            <LazyStepUp
              ui={ui}
              challenge={challenge}
              onDone={({ exportBundle }) => {
                setChallenge(null)
                postBundle(exportBundle)
              }}
              onCancel={onClose}
            />
          ) : error ? (
            <Alert tone="error">
              <ErrorText ui={ui} error={error} />
            </Alert>
          ) : stage === 'loading' ? (
            <p className="lk-row lk-muted" role="status" style={{ margin: 0 }}>
              <Spinner />
              {ui.t('frameLoading')}
            </p>
          ) : null}
          <SecretFrame
            ref={frame}
            kind="export"
            mode={frameMode}
            ui={ui}
            title={ui.t('exportFrameTitle', { secret })}
            labels={labels}
            height={isKey ? 120 : 250}
            onEvent={(event) => void onFrameEvent(event)}
          />
          <Button block onClick={onClose}>
            {ui.t('done')}
          </Button>
        </>
      )}
    </div>
  )
}
