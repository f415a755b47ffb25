import { Suspense, useId, useState } from 'react'
import type { MessageFormat, SignMessageReturnType } from '../../core/actions/activities/signMessage.ts'
import type { MfaRequiredError } from '../../core/errors.ts'
import { useSignMessage, useWalletAccounts } from '../../react/index.ts'
import { joinStrings } from '../i18n/joinStrings.ts'
import { hiddenStrings } from '../i18n/sections/hidden.ts'
import { signStrings } from '../i18n/sections/sign.ts'
import { isMfaRequired, LazyStepUp } from '../mfa/LazyStepUp.tsx'
import { Alert } from '../ui/Alert.tsx'
import { CopyButton } from '../ui/CopyButton.tsx'
import { Dialog } from '../ui/Dialog.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { HIDDEN } from '../ui/hiddenChars.ts'
import { CheckIcon, SignatureIcon } from '../ui/icons.tsx'
import { HiddenWarning, Marked } from '../ui/Marked.tsx'
import { Button, Header, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { uiStrings } from '../ui/uiStrings.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { networkOf } from '../wallets/networkOf.ts'

const strings = /* @__PURE__ */ joinStrings(uiStrings, signStrings, hiddenStrings)
type Keys = keyof typeof strings.en

export interface SignMessageResult {
  address: string
  message: string
  /** Ethereum: `0x` r‖s‖v; others (Solana too): r‖s hex. */
  signature: string
  /** Solana (ed25519) accounts: the signature in base58, as shown in the dialog. */
  signatureBase58?: string
  /** Cosmos/Sei (ADR-036 r‖s) and Bitcoin/Dogecoin (BIP-137) accounts: base64, as shown in the dialog. */
  signatureBase64?: string
  /** How it was signed, hence how to verify it (`SignMessageReturnType['format']`). */
  format?: MessageFormat
}

export interface SignMessageDialogProps extends UiOptions {
  open: boolean
  onOpenChange: (open: boolean) => void
  /**
   * The text to sign, shown as it will be signed: each character that shows as nothing or turns
   * the text around (zero-width, bidirectional controls) is shown as a marked `U+XXXX`, with a
   * warning, so that what the user reads is what they sign.
   */
  message: string
  /** Account address that signs. @default the first account of the user's first wallet */
  address?: string
  /** Called with the signature once signed. */
  onSigned?: (result: SignMessageResult) => void
}

/** Shows what will be signed, signs it with `useSignMessage`, shows the signature. */
export function SignMessageDialog(props: SignMessageDialogProps) {
  return (
    <Suspense fallback={null}>
      <SignMessageDialogInner {...props} />
    </Suspense>
  )
}

function SignMessageDialogInner({
  open,
  onOpenChange,
  message,
  address,
  onSigned,
  ...look
}: SignMessageDialogProps) {
  const ui = useUi(look, strings)
  const titleId = useId()
  const descriptionId = useId()
  return (
    <Dialog open={open} onOpenChange={onOpenChange} labelledBy={titleId} describedBy={descriptionId} ui={ui}>
      <SignMessageBody
        key={`${message}|${address}`}
        ui={ui}
        titleId={titleId}
        descriptionId={descriptionId}
        message={message}
        address={address}
        onSigned={onSigned}
        onClose={() => onOpenChange(false)}
      />
    </Dialog>
  )
}

function SignMessageBody({
  ui,
  titleId,
  descriptionId,
  message,
  address,
  onSigned,
  onClose,
}: {
  ui: Ui<Keys>
  titleId: string
  descriptionId: string
  message: string
  address: string | undefined
  onSigned: SignMessageDialogProps['onSigned']
  onClose: () => void
}) {
  const accounts = useWalletAccounts()
  const sign = useSignMessage()
  const [signature, setSignature] = useState<string | null>(null)
  const [challenge, setChallenge] = useState<MfaRequiredError<SignMessageReturnType> | null>(null)
  const account = address
    ? accounts.data?.accounts.find((a) => a.address === address)
    : accounts.data?.accounts[0]
  const signWith = address ?? account?.address
  // A message signMessage refuses to sign (a transaction in disguise, an account whose chain has no
  // message format) says so; trying again cannot help.
  const refusal = refusalOf(sign.error)

  const run = async () => {
    if (!signWith) return
    try {
      signed(signWith, await sign.mutateAsync({ signWith, message }))
    } catch (caught) {
      // An MFA policy holds the signature: ask for the factor (issue 38). Anything else shows from sign.error.
      if (isMfaRequired(caught)) setChallenge(caught as MfaRequiredError<SignMessageReturnType>)
    }
  }
  const signed = (address: string, result: SignMessageReturnType) => {
    // Solana accounts show base58, Cosmos and Bitcoin ones base64, as their tools expect; the hex
    // stays in `onSigned`.
    setSignature(result.signatureBase58 ?? result.signatureBase64 ?? result.signature)
    onSigned?.({
      address,
      message,
      signature: result.signature,
      ...(result.signatureBase58 ? { signatureBase58: result.signatureBase58 } : {}),
      ...(result.signatureBase64 ? { signatureBase64: result.signatureBase64 } : {}),
      ...(result.format ? { format: result.format } : {}),
    })
  }

  if (signature) {
    return (
      <div className="lk-panel">
        <Header ui={ui} titleId={titleId} title={ui.t('signedTitle')} onClose={onClose} />
        <div className="lk-hero" data-tone="success" aria-hidden="true">
          <CheckIcon size={28} />
        </div>
        <div className="lk-field">
          <span className="lk-label">{ui.t('signatureLabel')}</span>
          <pre className="lk-code">{signature}</pre>
          <div className="lk-row" style={{ justifyContent: 'flex-end' }}>
            <CopyButton ui={ui} text={signature} label={ui.t('copySignature')} />
          </div>
        </div>
        <Button block onClick={onClose}>
          {ui.t('done')}
        </Button>
      </div>
    )
  }

  return (
    <div className="lk-panel">
      <Header
        ui={ui}
        titleId={titleId}
        title={ui.t('signTitle')}
        descriptionId={descriptionId}
        description={ui.t('signDescription')}
        onClose={onClose}
      />
      <div className="lk-hero" aria-hidden="true">
        <SignatureIcon size={28} />
      </div>
      <div className="lk-field">
        <span className="lk-label" id={`${titleId}-msg`}>
          {ui.t('signMessageLabel')}
        </span>
        {HIDDEN.test(message) ? <HiddenWarning ui={ui} /> : null}
        <section aria-labelledby={`${titleId}-msg`}>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: long messages scroll; keyboard users must reach them */}
          <pre className="lk-code" tabIndex={0}>
            <Marked ui={ui} text={message} />
          </pre>
        </section>
      </div>
      <dl className="lk-kv">
        <dt>{ui.t('signWithLabel')}</dt>
        <dd>
          {accounts.isPending ? (
            <Spinner />
          ) : signWith ? (
            <span className="lk-row" data-wrap="">
              {account ? (
                <span className="lk-badge" data-tone="accent">
                  {networkOf(account.addressFormat)}
                </span>
              ) : null}
              <span className="lk-mono">{signWith}</span>
            </span>
          ) : (
            ui.t('walletsEmptyTitle')
          )}
        </dd>
      </dl>
      {challenge ? (
        <LazyStepUp
          ui={ui}
          challenge={challenge}
          onDone={(result) => {
            setChallenge(null)
            signed(signWith!, result)
          }}
          onCancel={onClose}
        />
      ) : refusal ? (
        <Alert tone="error">{ui.t(refusal)}</Alert>
      ) : sign.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={sign.error} />
        </Alert>
      ) : null}
      {accounts.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={accounts.error} />
        </Alert>
      ) : null}
      <div className="lk-stack" data-gap="sm" hidden={challenge !== null}>
        <Button
          block
          autoFocus
          data-lk-autofocus=""
          loading={sign.isPending}
          disabled={!signWith || refusal !== undefined}
          onClick={run}
        >
          {sign.isPending ? ui.t('signing') : sign.isError && !refusal ? ui.t('retry') : ui.t('signAction')}
        </Button>
        <Button block variant="ghost" onClick={onClose} disabled={sign.isPending}>
          {ui.t('cancel')}
        </Button>
      </div>
    </div>
  )
}

function refusalOf(error: unknown): 'signRefusedTransaction' | 'signRefusedNoFormat' | undefined {
  const rule = (error as { details?: { rule?: unknown } } | null)?.details?.rule
  // MESSAGE_IS_TRANSACTION, and on Solana MESSAGE_IS_DIGEST and MESSAGE_IS_APTOS_*: bytes another
  // chain's transaction of the same key signs.
  if (typeof rule === 'string' && rule.startsWith('MESSAGE_IS_')) return 'signRefusedTransaction'
  if (rule === 'NO_MESSAGE_FORMAT') return 'signRefusedNoFormat'
  return undefined
}
