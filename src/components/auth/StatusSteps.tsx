import { useId } from 'react'
import { Alert } from '../ui/Alert.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { CheckIcon, ExternalIcon, PasskeyIcon, WalletIcon } from '../ui/icons.tsx'
import { Button, Header, Spinner } from '../ui/parts.tsx'
import { useAuthFlowContext } from './AuthFlowContext.ts'
import { PROVIDER_MARK, PROVIDER_NAME } from './providers.tsx'

/** OAuth progress: waiting for the popup, or the redirect fallback when the popup was blocked. */
export function OAuthStep() {
  const flow = useAuthFlowContext()
  const { ui, step } = flow
  const titleId = flow.titleId
  if (step.name !== 'oauth') return null
  const provider = ui.t(PROVIDER_NAME[step.method])
  const Mark = PROVIDER_MARK[step.method]
  const blocked = step.status === 'blocked' || errorCodeOf(flow.error) === 'POPUP_BLOCKED'
  return (
    <div className="lk-panel">
      <Header
        ui={ui}
        titleId={titleId}
        title={ui.t('oauthTitle', { provider })}
        onBack={flow.back}
        onClose={flow.cancel}
      />
      <div className="lk-center">
        <div className="lk-hero" data-pulse={flow.busy ? '' : undefined} aria-hidden="true">
          <span className="lk-method-icon" style={{ inlineSize: 30, blockSize: 30 }}>
            <Mark />
          </span>
        </div>
        {blocked ? (
          <Alert tone="warning" title={ui.t('oauthBlockedTitle')}>
            {ui.t('oauthBlockedBody')}
          </Alert>
        ) : flow.error ? (
          <Alert tone="error">
            {errorCodeOf(flow.error) === 'USER_CANCELLED' ? (
              ui.t('oauthCancelled')
            ) : (
              <ErrorText ui={ui} error={flow.error} />
            )}
          </Alert>
        ) : (
          <p className="lk-row lk-muted" role="status" style={{ margin: 0 }}>
            {flow.busy ? <Spinner /> : null}
            {step.status === 'redirecting' ? ui.t('loading') : ui.t('oauthWaiting', { provider })}
          </p>
        )}
      </div>
      <div className="lk-stack" data-gap="sm">
        {blocked ? (
          <Button block onClick={() => void flow.startOAuth(step.method, { redirect: true })}>
            <ExternalIcon size={18} />
            {ui.t('oauthRedirect')}
          </Button>
        ) : flow.error ? (
          <Button block onClick={() => void flow.startOAuth(step.method)}>
            {ui.t('retry')}
          </Button>
        ) : null}
        <Button block variant="ghost" onClick={flow.back}>
          {ui.t('cancel')}
        </Button>
      </div>
    </div>
  )
}

/** The passkey prompt (sign-in or sign-up), with retry and a switch to sign-up. */
export function PasskeyStep() {
  const flow = useAuthFlowContext()
  const { ui, step } = flow
  const titleId = flow.titleId
  if (step.name !== 'passkey') return null
  const code = errorCodeOf(flow.error)
  const noAccount =
    code === 'ACCOUNT_NOT_FOUND' || code === 'AUTHENTICATOR_NOT_FOUND' || code === 'PUBLIC_KEY_NOT_FOUND'
  const signUp = step.mode === 'sign-up'
  const cancelled = code === 'USER_CANCELLED'
  // Signing in, no passkey was used or none is known: creating an account is the likely next step,
  // offered first; after another failure it is offered after "Retry".
  const signUpFirst = !signUp && (noAccount || cancelled)
  const signUpInstead = (
    <Button
      block
      variant={signUpFirst ? 'primary' : 'secondary'}
      onClick={() => void flow.startPasskey('sign-up')}
    >
      {ui.t('passkeySignUpInstead')}
    </Button>
  )
  return (
    <div className="lk-panel">
      <Header
        ui={ui}
        titleId={titleId}
        title={signUp ? ui.t('passkeyCreateTitle') : ui.t('passkeyTitle')}
        onBack={flow.back}
        onClose={flow.cancel}
      />
      <div className="lk-center">
        <div className="lk-hero" data-pulse={flow.busy ? '' : undefined} aria-hidden="true">
          <PasskeyIcon size={28} />
        </div>
        {flow.error ? (
          <Alert tone="error">
            {noAccount ? (
              ui.t('passkeyNoAccount')
            ) : cancelled ? (
              // Signing in, the browser answers the same whether the prompt was dismissed or this
              // device has no passkey for the site (a first visit): say what is true of both.
              signUp ? (
                ui.t('passkeyCancelled')
              ) : (
                ui.t('passkeyNoneUsed')
              )
            ) : (
              <ErrorText ui={ui} error={flow.error} />
            )}
          </Alert>
        ) : (
          <p className="lk-row lk-muted" role="status" style={{ margin: 0 }}>
            {flow.busy ? <Spinner /> : null}
            {signUp && !flow.busy ? ui.t('passkeyCreateBody') : ui.t('passkeyWaiting')}
          </p>
        )}
      </div>
      <div className="lk-stack" data-gap="sm">
        {signUpFirst ? signUpInstead : null}
        {flow.error || (signUp && !flow.busy) ? (
          <Button
            block
            variant={signUpFirst ? 'secondary' : 'primary'}
            onClick={() => void flow.startPasskey(step.mode)}
          >
            {signUp ? ui.t('passkeyCreate') : ui.t('retry')}
          </Button>
        ) : null}
        {!signUp && flow.error && !signUpFirst ? signUpInstead : null}
        <Button block variant="ghost" onClick={flow.back}>
          {ui.t('cancel')}
        </Button>
      </div>
    </div>
  )
}

/** Browser wallets found through EIP-6963; picking one asks it to sign in. */
export function WalletStep() {
  const flow = useAuthFlowContext()
  const { ui, wallets } = flow
  const titleId = flow.titleId
  const descriptionId = useId()
  const pending = wallets.find((w) => w.id === flow.pendingWalletId)
  return (
    <div className="lk-panel">
      <Header
        ui={ui}
        titleId={titleId}
        title={ui.t('walletTitle')}
        descriptionId={descriptionId}
        description={ui.t('walletDescription')}
        onBack={flow.back}
        onClose={flow.cancel}
      />
      {flow.error ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={flow.error} />
        </Alert>
      ) : null}
      {wallets.length === 0 ? (
        <div className="lk-center" role="status">
          <div className="lk-hero" aria-hidden="true">
            <WalletIcon size={26} />
          </div>
          <strong className="lk-strong">{ui.t('walletNoneTitle')}</strong>
          <span className="lk-muted">{ui.t('walletNoneBody')}</span>
        </div>
      ) : (
        <ul className="lk-stack" data-gap="sm" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
          {wallets.map((wallet) => (
            <li key={wallet.id}>
              <button
                type="button"
                className="lk-method"
                disabled={flow.busy}
                aria-busy={flow.pendingWalletId === wallet.id || undefined}
                onClick={() => void flow.startWallet(wallet.id)}
              >
                <span className="lk-method-icon">
                  {wallet.icon ? <img src={wallet.icon} alt="" /> : <WalletIcon />}
                </span>
                <span className="lk-method-label">{wallet.name}</span>
                {flow.pendingWalletId === wallet.id ? (
                  <Spinner />
                ) : (
                  <span className="lk-badge" data-tone="success">
                    {ui.t('walletDetected')}
                  </span>
                )}
              </button>
            </li>
          ))}
        </ul>
      )}
      {pending && flow.busy ? (
        <p className="lk-row lk-muted" role="status" style={{ margin: 0, justifyContent: 'center' }}>
          {ui.t('walletWaiting', { wallet: pending.name })}
        </p>
      ) : null}
    </div>
  )
}

/** Signed in; new accounts are offered a passkey first. */
export function SuccessStep() {
  const flow = useAuthFlowContext()
  const { ui, step } = flow
  const titleId = flow.titleId
  const offerId = useId()
  if (step.name === 'offer-passkey') {
    return (
      <div className="lk-panel">
        <Header ui={ui} titleId={titleId} title={ui.t('offerPasskeyTitle')} onClose={flow.finish} />
        <div className="lk-center">
          <div className="lk-hero" aria-hidden="true">
            <PasskeyIcon size={28} />
          </div>
          <p className="lk-muted" id={offerId} style={{ margin: 0 }}>
            {step.via === 'otp'
              ? ui.t('offerPasskeyBody')
              : step.via === 'wallet'
                ? ui.t('offerPasskeyBodyWallet')
                : ui.t('offerPasskeyBodyOAuth', { provider: ui.t(PROVIDER_NAME[step.via]) })}
          </p>
        </div>
        {flow.error ? (
          <Alert tone="error">
            <ErrorText ui={ui} error={flow.error} />
          </Alert>
        ) : null}
        <div className="lk-stack" data-gap="sm">
          <Button block loading={flow.busy} onClick={() => void flow.addPasskey()}>
            {ui.t('offerPasskeyAdd')}
          </Button>
          {/* Takes focus when the offer replaces the code step (the least consequential answer: a stray
              Enter starts no passkey ceremony), and reads the offer to a screen reader with it. */}
          <Button
            block
            variant="ghost"
            disabled={flow.busy}
            onClick={flow.finish}
            data-lk-autofocus=""
            aria-describedby={offerId}
          >
            {ui.t('offerPasskeySkip')}
          </Button>
        </div>
      </div>
    )
  }
  const isNewUser = step.name === 'success' && step.isNewUser
  return (
    <div className="lk-panel">
      <div className="lk-center" style={{ paddingBlockStart: 12 }}>
        <div className="lk-hero" data-tone="success" aria-hidden="true">
          <CheckIcon size={30} />
        </div>
        <div role="status" className="lk-stack" data-gap="sm">
          <h2 className="lk-title" id={titleId} tabIndex={-1}>
            {isNewUser ? ui.t('successNewTitle') : ui.t('successTitle')}
          </h2>
          <p className="lk-muted" style={{ margin: 0 }}>
            {ui.t('successBody')}
          </p>
        </div>
      </div>
      <Button block onClick={flow.finish} data-lk-autofocus="">
        {ui.t('done')}
      </Button>
    </div>
  )
}
