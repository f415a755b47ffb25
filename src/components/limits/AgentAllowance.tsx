import type { SpendingLimit } from '@latchkey/protocol'
import { lazy, Suspense, useEffect, useId, useRef, useState } from 'react'
import {
  type AgentToken,
  agentOfPolicy,
  type GrantAgentAllowanceReturnType,
} from '../../core/actions/activities/grantAgentAllowance.ts'
import type { RevokeAgentAllowanceReturnType } from '../../core/actions/activities/revokeAgentAllowance.ts'
import type { MfaRequiredError } from '../../core/errors.ts'
import { usePolicies, useRevokeAgentAllowance, useSpendingLimits } from '../../react/index.ts'
import { isMfaRequired, LazyStepUp } from '../mfa/LazyStepUp.tsx'
import { Alert } from '../ui/Alert.tsx'
import { ConfirmStep } from '../ui/ConfirmStep.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { LoadFailed, Loading } from '../ui/feedback.tsx'
import { PlusIcon } from '../ui/icons.tsx'
import { Button, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { formatAmount, freesText, leftText } from './allowance.ts'
import { type LimitsKey, limitsUiStrings } from './limitsStrings.ts'

// The form loads only when the user asks to grant an allowance.
const loadForm = () => import('./AgentAllowanceForm.tsx')
const AgentAllowanceForm = lazy(() => loadForm().then((m) => ({ default: m.AgentAllowanceForm })))

export interface AgentAllowanceProps extends UiOptions {
  /** The chain the allowance is granted on (its native unit), e.g. `eip155:8453`. */
  caip2: string
  /**
   * The agent's P-256 public key (compressed hex) when the app created the agent's key itself;
   * the form then does not ask for it. Otherwise the user pastes the agent's public key.
   */
  agentPublicKey?: string | undefined
  /** The name the form starts with. */
  defaultAgentName?: string | undefined
  /** Called once an allowance is granted: the agent's user, key, limit and policy ids. */
  onGranted?: ((grant: GrantAgentAllowanceReturnType & { agentName: string }) => void) | undefined
  /** Called once an allowance is revoked. */
  onRevoked?: ((result: RevokeAgentAllowanceReturnType) => void) | undefined
  className?: string | undefined
}

/**
 * Lets the signed-in user give an agent (an AI agent, a back end) an allowance, see what it has
 * used and what is left, and take it back. The agent gets its own key that can sign and nothing
 * else, under a spending limit on that key (amount per hour, day, week or 30 days, optionally
 * only to some addresses); revoking deletes the key, its policy and its limit.
 */
export function AgentAllowance(props: AgentAllowanceProps) {
  return (
    <Suspense fallback={null}>
      <AgentAllowanceInner {...props} />
    </Suspense>
  )
}

/**
 * The agents' allowances: the limits an agent policy of `grantAgentAllowance` names (with its
 * token, for an ERC-20 one), scoped to a key or a user. Any other limit, key-scoped or not (one an
 * operator or a back end set), is not an agent's and is not listed, nor offered for revoking.
 */
function agentLimits(
  limits: readonly SpendingLimit[] | undefined,
  policies: readonly { notes: string }[] | undefined,
): { limit: SpendingLimit; token: AgentToken | undefined }[] {
  const agents = new Map<string, AgentToken | undefined>()
  for (const policy of policies ?? []) {
    const agent = agentOfPolicy(policy.notes)
    if (agent) agents.set(agent.spendingLimitId, agent.token)
  }
  return (limits ?? [])
    .filter(
      (limit) =>
        agents.has(limit.spendingLimitId) &&
        (limit.scope.type === 'SPENDING_LIMIT_SCOPE_API_KEY' ||
          limit.scope.type === 'SPENDING_LIMIT_SCOPE_USER'),
    )
    .map((limit) => ({ limit, token: agents.get(limit.spendingLimitId) }))
}

function AgentAllowanceInner({
  caip2,
  agentPublicKey,
  defaultAgentName,
  onGranted,
  onRevoked,
  className,
  ...look
}: AgentAllowanceProps) {
  const ui = useUi(look, limitsUiStrings)
  const titleId = useId()
  const spendingLimits = useSpendingLimits()
  const policies = usePolicies()
  // Both reads as one: pending until both are, failed when either is (its retry reads both again).
  const limits = {
    isPending: spendingLimits.isPending || policies.isPending,
    isError: spendingLimits.isError || policies.isError,
    error: spendingLimits.error ?? policies.error,
    refetch: () => Promise.all([spendingLimits.refetch(), policies.refetch()]),
  }
  const revoke = useRevokeAgentAllowance()
  // The allowance whose revoking asks "are you sure?"; the row whose Revoke takes focus back.
  const [confirming, setConfirming] = useState<string>()
  const [refocusRevoke, setRefocusRevoke] = useState<string>()
  const list = useRef<HTMLUListElement>(null)
  useEffect(() => {
    if (refocusRevoke === undefined) return
    list.current
      ?.querySelector<HTMLButtonElement>(`[data-lk-agent="${CSS.escape(refocusRevoke)}"] > button`)
      ?.focus()
    setRefocusRevoke(undefined)
  }, [refocusRevoke])
  const [granting, setGranting] = useState(false)
  const [notice, setNotice] = useState<string | null>(null)
  const grantRow = useRef<HTMLDivElement>(null)
  // Focus returns to the grant button once the form closes or a row is gone (after that render).
  const [focusTurn, setFocusTurn] = useState(0)
  const refocus = () => setFocusTurn((turn) => turn + 1)
  useEffect(() => {
    if (focusTurn > 0) grantRow.current?.querySelector('button')?.focus()
  }, [focusTurn])
  // A grant or revoke waiting for the user's second factor: the step-up shows in place of the form
  // (or under the list); `done` is what its success would have done, `back` where focus returns.
  const [waiting, setWaiting] = useState<{
    challenge: MfaRequiredError<unknown>
    done: (result: unknown) => void
    back: () => void
    /** A revoke's: whose key still signs until the code is given. */
    stillSigns?: string
  } | null>(null)
  const granted = (grant: GrantAgentAllowanceReturnType & { agentName: string }) => {
    setGranting(false)
    setNotice(ui.t('agentGranted', { name: grant.agentName }))
    refocus()
    onGranted?.(grant)
  }
  const revoked = (result: RevokeAgentAllowanceReturnType, name: string) => {
    setNotice(ui.t('agentRevoked', { name }))
    refocus()
    onRevoked?.(result)
  }
  /** The step-up finished the action: its success, and the lists read again (the hook's own refresh ran only for a direct success). */
  const stepUpDone = (held: NonNullable<typeof waiting>, result: unknown) => {
    setWaiting(null)
    held.done(result)
    void limits.refetch()
  }
  const stepUpCancelled = (held: NonNullable<typeof waiting>) => {
    setWaiting(null)
    held.back()
  }
  const agents = agentLimits(spendingLimits.data?.spendingLimits, policies.data?.policies)
  const root = {
    ...ui.rootProps,
    className: `${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`,
    'aria-labelledby': titleId,
  }
  return (
    <section {...root}>
      <div className="lk-stack" data-gap="sm">
        <h2 className="lk-card-title" id={titleId}>
          {ui.t('agentTitle')}
        </h2>
        <p className="lk-subtle" style={{ margin: 0 }}>
          {ui.t('agentDescription')}
        </p>
      </div>
      {limits.isPending ? (
        <Loading ui={ui} />
      ) : limits.isError ? (
        <LoadFailed ui={ui} error={limits.error} retry={() => void limits.refetch()} />
      ) : agents.length === 0 ? (
        <p className="lk-subtle" style={{ margin: 0 }}>
          {ui.t('agentEmpty')}
        </p>
      ) : (
        <ul className="lk-list" aria-labelledby={titleId} ref={list}>
          {agents.map(({ limit, token }) => (
            <AgentRow
              key={limit.spendingLimitId}
              ui={ui}
              limit={limit}
              token={token}
              revoking={revoke.isPending && revoke.variables?.spendingLimitId === limit.spendingLimitId}
              disabled={revoke.isPending || confirming !== undefined || waiting !== null}
              confirming={confirming === limit.spendingLimitId}
              onRevoke={() => {
                setNotice(null)
                setConfirming(limit.spendingLimitId)
              }}
              onCancel={() => {
                setConfirming(undefined)
                setRefocusRevoke(limit.spendingLimitId)
              }}
              onConfirm={() => {
                setConfirming(undefined)
                revoke.mutate(
                  { spendingLimitId: limit.spendingLimitId },
                  {
                    onSuccess: (result) => revoked(result, limit.spendingLimitName),
                    onError: (caught) => {
                      if (isMfaRequired(caught))
                        setWaiting({
                          challenge: caught,
                          done: (result) =>
                            revoked(result as RevokeAgentAllowanceReturnType, limit.spendingLimitName),
                          back: () => {
                            // Cancelled: nothing was revoked, and the key still signs.
                            setNotice(ui.t('agentNotRevoked', { name: limit.spendingLimitName }))
                            setRefocusRevoke(limit.spendingLimitId)
                          },
                          stillSigns: limit.spendingLimitName,
                        })
                      // Its Revoke again, enabled once more, under the alert that says why.
                      else setRefocusRevoke(limit.spendingLimitId)
                    },
                  },
                )
              }}
            />
          ))}
        </ul>
      )}
      {waiting ? (
        // Escape cancels the step-up, as it does the form and the confirmation it follows; not while
        // a factor is being proven (its Cancel is disabled then too, aria-busy on its submit).
        <fieldset
          style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}
          onKeyDown={(event) => {
            if (event.key === 'Escape' && !event.currentTarget.querySelector('[aria-busy="true"]'))
              stepUpCancelled(waiting)
          }}
        >
          {waiting.stillSigns !== undefined ? (
            <p className="lk-subtle" style={{ margin: 0 }}>
              {ui.t('agentStillSigns', { name: waiting.stillSigns })}
            </p>
          ) : null}
          <LazyStepUp
            ui={ui}
            challenge={waiting.challenge}
            onDone={(result) => stepUpDone(waiting, result)}
            onCancel={() => stepUpCancelled(waiting)}
          />
        </fieldset>
      ) : null}
      {revoke.isError && !isMfaRequired(revoke.error) ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={revoke.error} />
        </Alert>
      ) : null}
      <p className="lk-subtle" role="status" style={{ margin: 0 }}>
        {notice}
      </p>
      {granting ? (
        <Suspense
          fallback={
            <p className="lk-row lk-muted" style={{ margin: 0 }}>
              <Spinner />
              {ui.t('loading')}
            </p>
          }
        >
          <AgentAllowanceForm
            ui={ui}
            caip2={caip2}
            agentPublicKey={agentPublicKey}
            defaultAgentName={defaultAgentName}
            takenNames={agents.map(({ limit }) => limit.spendingLimitName)}
            onCancel={() => {
              setGranting(false)
              refocus()
            }}
            onGranted={granted}
            onHeld={(challenge, agentName) => {
              // The step-up takes over (and the focus); the form it came from is done.
              setGranting(false)
              setWaiting({
                challenge,
                done: (result) => granted({ ...(result as GrantAgentAllowanceReturnType), agentName }),
                back: refocus,
              })
            }}
          />
        </Suspense>
      ) : waiting ? null : (
        <div className="lk-row" ref={grantRow}>
          <Button
            variant="secondary"
            onClick={() => {
              setNotice(null)
              setGranting(true)
            }}
          >
            <PlusIcon />
            {ui.t('agentGrant')}
          </Button>
        </div>
      )}
    </section>
  )
}

function AgentRow({
  ui,
  limit,
  token,
  revoking,
  disabled,
  confirming,
  onRevoke,
  onCancel,
  onConfirm,
}: {
  ui: Ui<LimitsKey>
  limit: SpendingLimit
  token: AgentToken | undefined
  revoking: boolean
  disabled: boolean
  /** "Revoke … ?" is asked under the row. */
  confirming: boolean
  onRevoke: () => void
  onCancel: () => void
  onConfirm: () => void
}) {
  const now = Date.now()
  const frees = freesText(ui.t, limit, now, ui.locale)
  const amount = (value: string) => formatAmount(ui.t, ui.locale, limit.asset, value, token)
  // Where the token lives: an ERC-20's contract, an SPL token's mint (none for the native unit).
  const { asset } = limit
  const tokenAddress =
    asset.type === 'SPENDING_LIMIT_ASSET_ERC20'
      ? { label: 'agentTokenContract' as const, address: asset.contract }
      : asset.type === 'SPENDING_LIMIT_ASSET_SPL'
        ? { label: 'agentTokenMint' as const, address: asset.mint }
        : undefined
  const reached = limit.remaining === '0'
  return (
    <li data-lk-agent={limit.spendingLimitId}>
      <span className="lk-grow lk-stack" data-gap="sm" data-basis="text">
        <span className="lk-row" data-wrap="">
          <span className="lk-strong">{limit.spendingLimitName}</span>
          {reached ? (
            <span className="lk-badge" data-tone="warning">
              {ui.t('agentLimitReached')}
            </span>
          ) : null}
        </span>
        <span>
          {leftText(ui.t, ui.locale, limit, token)}
          {frees ? <span className="lk-subtle">{` · ${frees}`}</span> : null}
        </span>
        <dl className="lk-kv">
          <dt>{ui.t('agentUsed')}</dt>
          <dd>{ui.t('agentUsedOf', { used: amount(limit.used), limit: amount(limit.amount) })}</dd>
          {tokenAddress ? (
            <>
              <dt>{ui.t(tokenAddress.label)}</dt>
              <dd className="lk-mono" dir="ltr">
                {tokenAddress.address}
              </dd>
            </>
          ) : null}
          <dt>{ui.t('agentTo')}</dt>
          <dd>
            {limit.allowedDestinations.length === 0 ? (
              ui.t('agentAnyAddress')
            ) : (
              <span className="lk-stack" data-gap="sm">
                {limit.allowedDestinations.map((address) => (
                  <span key={address} className="lk-mono" dir="ltr">
                    {address}
                  </span>
                ))}
              </span>
            )}
          </dd>
        </dl>
      </span>
      <Button
        size="sm"
        variant="danger"
        loading={revoking}
        disabled={disabled}
        aria-label={ui.t('agentRevokeLabel', { name: limit.spendingLimitName })}
        onClick={onRevoke}
      >
        {revoking ? ui.t('agentRevoking') : ui.t('agentRevoke')}
      </Button>
      {confirming ? (
        <ConfirmStep
          ui={ui}
          question={ui.t('agentRevokeConfirm', { name: limit.spendingLimitName })}
          confirm={ui.t('agentRevokeYes')}
          onConfirm={onConfirm}
          onCancel={onCancel}
        />
      ) : null}
    </li>
  )
}
