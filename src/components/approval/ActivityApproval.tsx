import { Fragment, Suspense, useEffect, useId, useRef, useState } from 'react'
import type { MfaRequiredError } from '../../core/errors.ts'
import type { Activity, PolicyEvaluation } from '../../core/index.ts'
import {
  useActivity,
  useApproveActivity,
  usePolicies,
  usePolicyEvaluations,
  useRejectActivity,
} from '../../react/index.ts'
import { joinStrings } from '../i18n/joinStrings.ts'
import { approvalStrings } from '../i18n/sections/approval.ts'
import { hiddenStrings } from '../i18n/sections/hidden.ts'
import { isMfaRequired, LazyStepUp } from '../mfa/LazyStepUp.tsx'
import { Alert } from '../ui/Alert.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { formatDateTime } from '../ui/formatDuration.ts'
import { CheckIcon, ClockIcon } from '../ui/icons.tsx'
import { HiddenWarning, Marked } from '../ui/Marked.tsx'
import { Button, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { uiStrings } from '../ui/uiStrings.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { type IntentField, type IntentFields, intentFields } from './intentFields.ts'

const strings = /* @__PURE__ */ joinStrings(uiStrings, approvalStrings, hiddenStrings)
type Keys = keyof typeof strings.en

export interface ActivityApprovalProps extends UiOptions {
  /** The activity waiting for consensus (e.g. from a `CONSENSUS_NEEDED` error's details). */
  activityId: string
  /** Called after the vote with the activity in its new state. */
  onVoted?: (vote: 'approved' | 'rejected') => void
  className?: string
}

/** `ACTIVITY_TYPE_CREATE_WALLET` → `Create wallet`. */
const readableType = (type: string) => {
  const words = type
    .replace(/^ACTIVITY_TYPE_/, '')
    .replace(/_V\d+$/, '')
    .toLowerCase()
    .split('_')
  const text = words.join(' ')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** Other fields shown before "Show all": the parameters of the activity's type are always all shown. */
const OTHER_SHOWN = 8

function FieldList({ ui, fields }: { ui: Ui<Keys>; fields: readonly IntentField[] }) {
  return (
    <dl className="lk-kv">
      {fields.map(({ name, value, hidden }, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: names can repeat once their hidden characters are marked
        <Fragment key={index}>
          <dt className="lk-mono" data-lk-hidden={hidden ? '' : undefined}>
            <Marked ui={ui} text={name} />
          </dt>
          <dd className="lk-mono" data-lk-hidden={hidden ? '' : undefined}>
            <Marked ui={ui} text={value} />
          </dd>
        </Fragment>
      ))}
    </dl>
  )
}

/**
 * What the activity would do: its type's parameters first, all of them and in full; then, apart and
 * marked as not its parameters, any other field the requester put in (the first `OTHER_SHOWN`, the
 * rest behind "Show all"); hidden characters in any of them marked and announced.
 */
function IntentDetails({ ui, id, fields }: { ui: Ui<Keys>; id: string; fields: IntentFields }) {
  const [all, setAll] = useState(false)
  // "Show all" goes once the rest is shown: focus moves to the list's heading, not to the page.
  const otherHeading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    if (all) otherHeading.current?.focus()
  }, [all])
  const { known, other, knownType } = fields
  if (known.length === 0 && other.length === 0) return null
  const shown = all || !knownType ? other : other.slice(0, OTHER_SHOWN)
  const hidden = known.some((f) => f.hidden) || other.some((f) => f.hidden)
  return (
    <section className="lk-stack" data-gap="sm" aria-labelledby={`${id}-details`}>
      <h3 className="lk-label" id={`${id}-details`} style={{ margin: 0 }}>
        {ui.t('approvalDetails')}
      </h3>
      {hidden ? <HiddenWarning ui={ui} /> : null}
      {known.length > 0 ? <FieldList ui={ui} fields={known} /> : null}
      {other.length > 0 ? (
        <section
          className="lk-stack"
          data-gap="sm"
          aria-labelledby={`${id}-other`}
          style={{
            borderBlockStart: '1px solid var(--lk-border)',
            paddingBlockStart: 12,
            marginBlockStart: 4,
          }}
        >
          <h4 className="lk-label" id={`${id}-other`} ref={otherHeading} tabIndex={-1} style={{ margin: 0 }}>
            {ui.t(knownType ? 'approvalOtherTitle' : 'approvalUnknownTitle', {
              count: new Intl.NumberFormat(ui.locale).format(other.length),
            })}
          </h4>
          <p className="lk-subtle" style={{ margin: 0 }}>
            {ui.t(knownType ? 'approvalOtherNote' : 'approvalUnknownNote')}
          </p>
          <FieldList ui={ui} fields={shown} />
          {shown.length < other.length ? (
            <button
              type="button"
              className="lk-link"
              style={{ alignSelf: 'flex-start' }}
              onClick={() => setAll(true)}
            >
              {ui.t('approvalShowMore', {
                count: new Intl.NumberFormat(ui.locale).format(other.length - shown.length),
              })}
            </button>
          ) : null}
        </section>
      ) : null}
    </section>
  )
}

/**
 * Ids of the policies the latest evaluation is waiting on (a matching ALLOW whose consensus is
 * not met yet); empty when the activity waits for the root quorum instead.
 */
export function policiesAskingForConsensus(evaluations: readonly PolicyEvaluation[]): string[] {
  const latest = evaluations.at(-1)
  return (latest?.policyEvaluations ?? []).flatMap((entry) =>
    entry.policyId !== undefined && entry.outcome === 'OUTCOME_REQUIRES_CONSENSUS' ? [entry.policyId] : [],
  )
}

/** An activity waiting for consensus: what it is, who asked for it, votes so far, approve or reject. */
export function ActivityApproval(props: ActivityApprovalProps) {
  return (
    <Suspense fallback={null}>
      <ActivityApprovalInner {...props} />
    </Suspense>
  )
}

function ActivityApprovalInner({ activityId, onVoted, className, ...look }: ActivityApprovalProps) {
  const ui = useUi(look, strings)
  const titleId = useId()
  const activity = useActivity({ activityId })
  const evaluations = usePolicyEvaluations({ activityId })
  const policies = usePolicies()
  const approve = useApproveActivity()
  const reject = useRejectActivity()
  // The vote waits for the voter's second factor (their MFA policies would hold this activity).
  const [challenge, setChallenge] = useState<MfaRequiredError<Activity> | null>(null)
  const [proven, setProven] = useState(false)
  const root = {
    ...ui.rootProps,
    className: `${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`,
    'aria-labelledby': titleId,
  }
  const title = (
    <h2 className="lk-card-title" id={titleId}>
      {ui.t('approvalTitle')}
    </h2>
  )
  if (activity.isPending)
    return (
      <section {...root}>
        {title}
        <p className="lk-row lk-muted" role="status" style={{ margin: 0 }}>
          <Spinner />
          {ui.t('loading')}
        </p>
      </section>
    )
  if (activity.isError || !activity.data)
    return (
      <section {...root}>
        {title}
        <Alert tone="error">
          <ErrorText ui={ui} error={activity.error} />
        </Alert>
      </section>
    )
  const a = activity.data.activity
  const waiting = a.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED'
  const approvals = a.votes.filter((v) => v.selection === 'VOTE_SELECTION_APPROVED').length
  const asking = policiesAskingForConsensus(evaluations.data?.policyEvaluations ?? []).map(
    (id) => policies.data?.policies.find((policy) => policy.policyId === id)?.policyName ?? id,
  )
  const voted = approve.isSuccess || proven ? 'approved' : reject.isSuccess ? 'rejected' : null
  const fields = intentFields(a.type, a.intent)
  // The requester's own approval is the first vote.
  const requester = a.votes[0]?.user?.userName
  const vote = (kind: 'approved' | 'rejected') => {
    const mutation = kind === 'approved' ? approve : reject
    mutation.mutate(
      { fingerprint: a.fingerprint },
      {
        onSuccess: () => onVoted?.(kind),
        onError: (error) => {
          if (isMfaRequired(error)) setChallenge(error as MfaRequiredError<Activity>)
        },
      },
    )
  }
  return (
    <section {...root}>
      <div className="lk-row">
        <span
          className="lk-hero"
          data-tone={waiting ? 'warning' : 'success'}
          style={{ inlineSize: 40, blockSize: 40, margin: 0 }}
          aria-hidden="true"
        >
          {waiting ? <ClockIcon /> : <CheckIcon />}
        </span>
        <div className="lk-grow">
          {title}
          <span className="lk-subtle">
            {waiting ? ui.t('approvalDescription') : ui.t('approvalCompleted')}
          </span>
        </div>
      </div>
      <dl className="lk-kv">
        <dt>{ui.t('approvalType')}</dt>
        <dd className="lk-strong">{readableType(a.type)}</dd>
        <dt>{ui.t('approvalStatus')}</dt>
        <dd>
          <span
            className="lk-badge"
            data-tone={waiting ? 'warning' : a.status === 'ACTIVITY_STATUS_COMPLETED' ? 'success' : 'danger'}
          >
            {readableType(a.status.replace('ACTIVITY_STATUS_', ''))}
          </span>
        </dd>
        {waiting && evaluations.data ? (
          <>
            <dt>{ui.t('approvalPolicy')}</dt>
            <dd>{asking.length > 0 ? asking.join(', ') : ui.t('approvalRootQuorum')}</dd>
          </>
        ) : null}
        <dt>{ui.t('approvalRequested')}</dt>
        <dd>
          {formatDateTime(Number(a.createdAt.seconds) * 1000, ui.locale)}
          {requester ? (
            <>
              {' · '}
              {ui.t('approvalRequestedBy', { name: requester })}
            </>
          ) : null}
        </dd>
        <dt>{ui.t('approvalVotes')}</dt>
        <dd>{ui.t('approvalVotesCount', { count: new Intl.NumberFormat(ui.locale).format(approvals) })}</dd>
        <dt>{ui.t('approvalFingerprint')}</dt>
        <dd className="lk-mono">{a.fingerprint}</dd>
      </dl>
      <IntentDetails ui={ui} id={titleId} fields={fields} />
      <div aria-live="polite">
        {voted ? (
          <Alert tone="success">{voted === 'approved' ? ui.t('approvedTitle') : ui.t('rejectedTitle')}</Alert>
        ) : null}
      </div>
      {challenge ? (
        <LazyStepUp
          ui={ui}
          challenge={challenge}
          onDone={() => {
            setChallenge(null)
            setProven(true)
            void activity.refetch()
            onVoted?.('approved')
          }}
          onCancel={() => setChallenge(null)}
        />
      ) : (approve.isError && !isMfaRequired(approve.error)) || reject.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={approve.error ?? reject.error} />
        </Alert>
      ) : null}
      {waiting && !voted && !challenge ? (
        <div className="lk-row" style={{ justifyContent: 'flex-end' }}>
          <Button
            variant="secondary"
            loading={reject.isPending}
            disabled={!a.canReject || approve.isPending}
            onClick={() => vote('rejected')}
          >
            {ui.t('reject')}
          </Button>
          <Button
            loading={approve.isPending}
            disabled={!a.canApprove || reject.isPending}
            onClick={() => vote('approved')}
          >
            {ui.t('approve')}
          </Button>
        </div>
      ) : null}
    </section>
  )
}
