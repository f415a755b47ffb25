import { type ReactNode, Suspense, useEffect, useId, useRef, useState } from 'react'
import type { SendCallsReturnType } from '../../core/actions/activities/sendCalls.ts'
import type { GetCallsStatusReturnType } from '../../core/actions/queries/getCallsStatus.ts'
import { type MfaRequiredError, SpendingLimitExceededError } from '../../core/errors.ts'
import {
  useCallsStatus,
  useSendCalls,
  useSession,
  useSpendingLimits,
  useWalletAccounts,
} from '../../react/index.ts'
import { joinStrings } from '../i18n/joinStrings.ts'
import { hiddenStrings } from '../i18n/sections/hidden.ts'
import { sendStrings } from '../i18n/sections/send.ts'
import { spendingStrings } from '../i18n/sections/spending.ts'
import {
  coversNative,
  freesText,
  leftText,
  refusalText,
  tightest,
  withDecimalMark,
} from '../limits/allowance.ts'
import { isMfaRequired, LazyStepUp } from '../mfa/LazyStepUp.tsx'
import { Alert } from '../ui/Alert.tsx'
import { CopyButton } from '../ui/CopyButton.tsx'
import { Dialog } from '../ui/Dialog.tsx'
import { ErrorText, MessageText } from '../ui/ErrorText.tsx'
import { HIDDEN } from '../ui/hiddenChars.ts'
import { CheckIcon, ClockIcon, WalletIcon } from '../ui/icons.tsx'
import { HiddenWarning, Marked } from '../ui/Marked.tsx'
import { AlertIcon } from '../ui/noticeIcons.tsx'
import { Button, Header, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { uiStrings } from '../ui/uiStrings.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import type { CallDecoder, DecodedCall } from './decodeCalls.ts'
import { formatEth } from './formatEth.ts'

const strings = /* @__PURE__ */ joinStrings(uiStrings, sendStrings, spendingStrings, hiddenStrings)
type Keys = keyof typeof strings.en

/** One call to confirm. */
export interface SendTransactionCall {
  /** The address called, with 0x. */
  to: string
  /** Wei, as a bigint or a decimal string. @default 0 */
  value?: bigint | string | undefined
  /** Call data, hex with 0x. */
  data?: string | undefined
  /** The called contract's ABI: the call is then shown as its function and arguments. */
  abi?: readonly unknown[] | undefined
}

export interface SendTransactionProps extends UiOptions {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The calls, run in order and atomically (all or none). */
  calls: readonly SendTransactionCall[]
  /** The chain, `eip155:<chain id>`. */
  caip2: string
  /** Account that sends. @default the user's first Ethereum account */
  from?: string | undefined
  /** The organization's gas sponsor pays the fee (shown as "Sponsored"). @default false */
  sponsor?: boolean | undefined
  /** Opens on the status of a send already made, skipping the review (e.g. for `wallet_showCallsStatus`). */
  sendTransactionStatusId?: string | undefined
  /** Between status reads while pending. @default the client's `polling.intervalMs` */
  pollingIntervalMs?: number | undefined
  /**
   * Once a send has waited this long to be included, its status says it is taking longer than
   * usual (and a screen reader hears it). @default 60000
   */
  slowAfterMs?: number | undefined
  /** Called once the service accepted the send. */
  onSent?: ((result: SendCallsReturnType) => void) | undefined
  /** Called once the send is final: included (`status: 'success'`) or not (`'failure'`). */
  onSettled?: ((status: GetCallsStatusReturnType) => void) | undefined
  /**
   * Decodes a call's data with its `abi` to show its function and arguments: pass viem's
   * `decodeFunctionData` (the kit does not import viem itself). Without it the raw data is shown.
   */
  decodeFunctionData?: CallDecoder | undefined
}

/**
 * A confirmation for a batch of Ethereum calls: each call (to, amount in ETH, function and
 * arguments when an ABI is given), "Sponsored" when the app pays the fee, Confirm or Cancel; then
 * the status, polled until included or failed. `useSendCalls` and `useCallsStatus` do the work.
 */
export function SendTransaction(props: SendTransactionProps) {
  return (
    <Suspense fallback={null}>
      <SendTransactionInner {...props} />
    </Suspense>
  )
}

function SendTransactionInner({
  open,
  onOpenChange,
  calls,
  caip2,
  from,
  sponsor,
  sendTransactionStatusId,
  pollingIntervalMs,
  slowAfterMs,
  onSent,
  onSettled,
  decodeFunctionData,
  ...look
}: SendTransactionProps) {
  const ui = useUi(look, strings)
  const titleId = useId()
  const descriptionId = useId()
  return (
    <Dialog open={open} onOpenChange={onOpenChange} labelledBy={titleId} describedBy={descriptionId} ui={ui}>
      <SendTransactionBody
        key={sendTransactionStatusId ?? ''}
        ui={ui}
        titleId={titleId}
        descriptionId={descriptionId}
        calls={calls}
        caip2={caip2}
        from={from}
        sponsor={sponsor ?? false}
        initialId={sendTransactionStatusId}
        pollingIntervalMs={pollingIntervalMs}
        slowAfterMs={slowAfterMs ?? 60_000}
        onSent={onSent}
        onSettled={onSettled}
        decodeFunctionData={decodeFunctionData}
        onClose={() => onOpenChange(false)}
      />
    </Dialog>
  )
}

type Phase = 'review' | 'pending' | 'success' | 'failure'

function SendTransactionBody({
  ui,
  titleId,
  descriptionId,
  calls,
  caip2,
  from,
  sponsor,
  initialId,
  pollingIntervalMs,
  slowAfterMs,
  onSent,
  onSettled,
  decodeFunctionData,
  onClose,
}: {
  ui: Ui<Keys>
  titleId: string
  descriptionId: string
  calls: readonly SendTransactionCall[]
  caip2: string
  from: string | undefined
  decodeFunctionData: CallDecoder | undefined
  sponsor: boolean
  initialId: string | undefined
  pollingIntervalMs: number | undefined
  slowAfterMs: number
  onSent: SendTransactionProps['onSent']
  onSettled: SendTransactionProps['onSettled']
  onClose: () => void
}) {
  const [id, setId] = useState(initialId)
  const [challenge, setChallenge] = useState<MfaRequiredError<SendCallsReturnType> | null>(null)
  const send = useSendCalls()
  const status = useCallsStatus({ sendTransactionStatusId: id, pollingIntervalMs })
  const phase: Phase = id ? (status.data?.status ?? 'pending') : 'review'
  const container = useFocusOnPhase(phase)
  const slow = useWaitedLonger(phase === 'pending', slowAfterMs)

  const settled = useRef(false)
  useEffect(() => {
    if (!status.data?.final || settled.current) return
    settled.current = true
    onSettled?.(status.data)
  }, [status.data, onSettled])

  const confirm = async (sender: string) => {
    try {
      const result = await send.mutateAsync({
        from: sender,
        caip2,
        calls: calls.map(({ to, value, data }) => ({
          to,
          ...(value !== undefined ? { value: String(value) } : {}),
          ...(data !== undefined ? { data } : {}),
        })),
        ...(sponsor ? { sponsor: true } : {}),
      })
      onSent?.(result)
      setId(result.sendTransactionStatusId)
    } catch (caught) {
      // An MFA policy holds the send: ask for the factor (issue 38). Anything else shows from send.error.
      if (isMfaRequired(caught)) setChallenge(caught as MfaRequiredError<SendCallsReturnType>)
    }
  }

  return (
    <div className="lk-panel" ref={container}>
      {phase === 'review' && challenge ? (
        <LazyStepUp
          ui={ui}
          titleId={titleId}
          challenge={challenge}
          onDone={(result) => {
            setChallenge(null)
            onSent?.(result)
            setId(result.sendTransactionStatusId)
          }}
          onCancel={onClose}
        />
      ) : phase === 'review' ? (
        <Review
          ui={ui}
          titleId={titleId}
          descriptionId={descriptionId}
          calls={calls}
          caip2={caip2}
          from={from}
          sponsor={sponsor}
          sending={send.isPending}
          error={send.isError ? send.error : undefined}
          onConfirm={confirm}
          onClose={onClose}
          decodeFunctionData={decodeFunctionData}
        />
      ) : (
        <Status
          ui={ui}
          titleId={titleId}
          descriptionId={descriptionId}
          phase={phase}
          slow={slow}
          status={status.data}
          readError={status.isError ? <ErrorText ui={ui} error={status.error} /> : undefined}
          onClose={onClose}
        />
      )}
    </div>
  )
}

/**
 * Focus follows the steps (WAI-ARIA dialog pattern): each new phase focuses its
 * `[data-lk-autofocus]` control, else its title. The first phase is left to the dialog, which
 * focuses on open.
 */
function useFocusOnPhase(phase: Phase) {
  const container = useRef<HTMLDivElement>(null)
  const shown = useRef<Phase | null>(null)
  useEffect(() => {
    const previous = shown.current
    shown.current = phase
    if (previous === null || previous === phase) return
    const root = container.current
    const target =
      root?.querySelector<HTMLElement>('[data-lk-autofocus]:not([disabled])') ??
      root?.querySelector<HTMLElement>('.lk-title')
    target?.focus()
  }, [phase])
  return container
}

function Review({
  ui,
  titleId,
  descriptionId,
  calls,
  caip2,
  from,
  sponsor,
  sending,
  error,
  onConfirm,
  onClose,
  decodeFunctionData,
}: {
  ui: Ui<Keys>
  titleId: string
  descriptionId: string
  calls: readonly SendTransactionCall[]
  caip2: string
  from: string | undefined
  decodeFunctionData: CallDecoder | undefined
  sponsor: boolean
  sending: boolean
  error: unknown
  onConfirm: (from: string) => void
  onClose: () => void
}) {
  const accounts = useWalletAccounts()
  const sender =
    from ?? accounts.data?.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address
  const decoded = useDecodedCalls(calls, decodeFunctionData)
  const listId = `${titleId}-calls`
  // The limit that decides (the one with the least left) among those covering this account's ETH.
  const session = useSession()
  const limits = useSpendingLimits().data?.spendingLimits
  const allowance = tightest(
    limits?.filter((limit) => coversNative(limit, { address: sender, userId: session?.userId, caip2 })) ?? [],
  )
  const now = Date.now()
  const frees = allowance ? freesText(ui.t, allowance, now, ui.locale) : undefined
  // Confirm is disabled while sending, which drops focus to <body>: once the send fails (a
  // refusal in words, read out by the alert), focus goes back to it, now "Try again".
  const actions = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (error) actions.current?.querySelector<HTMLElement>('[data-lk-autofocus]:not([disabled])')?.focus()
  }, [error])
  return (
    <>
      <Header
        ui={ui}
        titleId={titleId}
        title={ui.t('sendTitle')}
        descriptionId={descriptionId}
        description={ui.t('sendDescription')}
        onClose={onClose}
      />
      <dl className="lk-kv">
        <dt>{ui.t('signWithLabel')}</dt>
        <dd>
          {sender ? (
            <span className="lk-mono">{sender}</span>
          ) : accounts.isPending ? (
            <Spinner />
          ) : (
            ui.t('walletsEmptyTitle')
          )}
        </dd>
        <dt>{ui.t('sendNetwork')}</dt>
        <dd className="lk-mono">{caip2}</dd>
        {allowance ? (
          <>
            <dt>{ui.t('sendAllowance')}</dt>
            <dd>
              <span className="lk-row" data-wrap="" data-lk-allowance="">
                <span>{leftText(ui.t, ui.locale, allowance)}</span>
                {frees ? <span className="lk-subtle">{frees}</span> : null}
              </span>
            </dd>
          </>
        ) : null}
        <dt>{ui.t('sendFee')}</dt>
        <dd>
          {sponsor ? (
            <span className="lk-row" data-wrap="">
              <span className="lk-badge" data-tone="success">
                {ui.t('sendSponsored')}
              </span>
              <span className="lk-subtle">{ui.t('sendSponsoredNote')}</span>
            </span>
          ) : (
            ui.t('sendFeeFromAccount')
          )}
        </dd>
      </dl>
      <div className="lk-field">
        <span className="lk-label" id={listId}>
          {ui.t('sendCallsLabel', { count: calls.length })}
        </span>
        {decoded?.some((call) => call && HIDDEN.test(callText(call))) ? <HiddenWarning ui={ui} /> : null}
        <ol className="lk-list" aria-labelledby={listId}>
          {calls.map((call, index) => (
            <li
              // biome-ignore lint/suspicious/noArrayIndexKey: the calls are a fixed, ordered list
              key={index}
              aria-label={ui.t('sendCallN', { index: index + 1 })}
            >
              <CallView ui={ui} call={call} decoded={decoded?.[index] ?? null} />
            </li>
          ))}
        </ol>
      </div>
      {error ? (
        <Alert tone="error">
          {error instanceof SpendingLimitExceededError ? (
            <MessageText
              text={refusalText({
                t: ui.t,
                refusal: error,
                limits,
                now,
                locale: ui.locale,
                sending: calls.reduce((sum, call) => sum + BigInt(call.value ?? 0), 0n),
              })}
            />
          ) : (
            <ErrorText ui={ui} error={error} />
          )}
        </Alert>
      ) : null}
      <div className="lk-stack" data-gap="sm" ref={actions}>
        <Button
          block
          autoFocus
          data-lk-autofocus=""
          loading={sending}
          disabled={!sender}
          onClick={() => sender && onConfirm(sender)}
        >
          {sending ? ui.t('sending') : error ? ui.t('retry') : ui.t('sendConfirm')}
        </Button>
        <Button block variant="ghost" onClick={onClose} disabled={sending}>
          {ui.t('cancel')}
        </Button>
      </div>
    </>
  )
}

/** A decoded call as shown: `transfer(0x…, 25)`. */
const callText = (call: DecodedCall) => `${call.functionName}(${call.args.join(', ')})`

function CallView({
  ui,
  call,
  decoded,
}: {
  ui: Ui<Keys>
  call: SendTransactionCall
  decoded: DecodedCall | null
}) {
  const value = call.value === undefined ? 0n : BigInt(call.value)
  const hasData = call.data !== undefined && call.data !== '0x'
  return (
    <dl className="lk-kv" style={{ inlineSize: '100%' }}>
      <dt>{ui.t('sendTo')}</dt>
      <dd className="lk-mono">{call.to}</dd>
      <dt>{ui.t('sendValue')}</dt>
      <dd>{ui.t('sendEth', { amount: withDecimalMark(formatEth(value), ui.locale) })}</dd>
      {decoded ? (
        <>
          <dt>{ui.t('sendFunction')}</dt>
          <dd className="lk-mono">
            <Marked ui={ui} text={callText(decoded)} />
          </dd>
        </>
      ) : hasData ? (
        <>
          <dt>{ui.t('sendData')}</dt>
          <dd className="lk-mono">{call.data}</dd>
        </>
      ) : null}
    </dl>
  )
}

/** Each call's function and arguments, decoded in a chunk loaded only when some call has an ABI. */
function useDecodedCalls(
  calls: readonly SendTransactionCall[],
  decodeFunctionData: CallDecoder | undefined,
): (DecodedCall | null)[] | null {
  // Kept with the calls it was decoded from: calls the page swaps while the review is open show
  // their raw data until their own decoding is done, never the previous batch's functions.
  const [decoded, setDecoded] = useState<{
    of: readonly SendTransactionCall[]
    calls: (DecodedCall | null)[]
  } | null>(null)
  useEffect(() => {
    if (!decodeFunctionData || !calls.some((call) => call.abi)) return
    let live = true
    import('./decodeCalls.ts').then(
      (m) => live && setDecoded({ of: calls, calls: m.decodeCalls(calls, decodeFunctionData) }),
      // A chunk that fails to load leaves the raw data on show.
      () => undefined,
    )
    return () => {
      live = false
    }
  }, [calls, decodeFunctionData])
  return decoded?.of === calls ? decoded.calls : null
}

/**
 * True once `pending` has held for `ms`: a send that waits that long to be included (a busy
 * network, or no instance broadcasting it yet) says so instead of waiting in silence. Counted from
 * when this dialog saw it pending, since the status carries no time.
 */
function useWaitedLonger(pending: boolean, ms: number): boolean {
  const [waited, setWaited] = useState(false)
  useEffect(() => {
    if (!pending) return
    const timer = setTimeout(() => setWaited(true), ms)
    return () => clearTimeout(timer)
  }, [pending, ms])
  return pending && waited
}

function Status({
  ui,
  titleId,
  descriptionId,
  phase,
  slow,
  status,
  readError,
  onClose,
}: {
  ui: Ui<Keys>
  titleId: string
  descriptionId: string
  phase: Exclude<Phase, 'review'>
  slow: boolean
  status: GetCallsStatusReturnType | undefined
  readError: ReactNode
  onClose: () => void
}) {
  const txHash = status?.eth?.txHash ?? status?.solana?.signature
  const reason = status?.error?.message ?? status?.txError
  const title =
    phase === 'success'
      ? ui.t('sendIncludedTitle')
      : phase === 'failure'
        ? ui.t('sendFailedTitle')
        : ui.t('sendPendingTitle')
  const description =
    phase === 'success'
      ? ui.t('sendIncludedBody')
      : phase === 'failure'
        ? ui.t('sendFailedBody')
        : ui.t('sendPendingBody')
  return (
    <>
      <Header
        ui={ui}
        titleId={titleId}
        title={title}
        descriptionId={descriptionId}
        description={description}
        onClose={onClose}
      />
      <div
        className="lk-hero"
        data-tone={phase === 'success' ? 'success' : phase === 'failure' ? 'error' : undefined}
        data-pulse={phase === 'pending' ? '' : undefined}
        aria-hidden="true"
      >
        {phase === 'success' ? (
          <CheckIcon size={28} />
        ) : phase === 'failure' ? (
          <AlertIcon size={28} />
        ) : txHash ? (
          <ClockIcon size={28} />
        ) : (
          <WalletIcon size={28} />
        )}
      </div>
      {/* Announces the outcome; once settled the heading above already shows it, so it is not shown twice. */}
      <p className={phase === 'pending' ? 'lk-subtle' : 'lk-visually-hidden'} role="status">
        {phase === 'pending' ? ui.t(slow ? 'sendSlowStatus' : 'sendPendingStatus') : title}
      </p>
      {txHash ? (
        <div className="lk-field">
          <span className="lk-label">{ui.t('sendTxHash')}</span>
          <span className="lk-mono">{txHash}</span>
          <div className="lk-row" style={{ justifyContent: 'flex-end' }}>
            <CopyButton ui={ui} text={txHash} label={ui.t('copyTxHash')} />
          </div>
        </div>
      ) : null}
      {/* The service's words, with a called contract's revert string in them: text, never links. */}
      {phase === 'failure' && reason ? (
        <Alert tone="error">
          <span style={{ overflowWrap: 'anywhere' }}>{reason}</span>
        </Alert>
      ) : null}
      {readError ? <Alert tone="error">{readError}</Alert> : null}
      <Button
        block
        data-lk-autofocus=""
        variant={phase === 'pending' ? 'secondary' : 'primary'}
        onClick={onClose}
      >
        {phase === 'pending' ? ui.t('close') : ui.t('done')}
      </Button>
    </>
  )
}
