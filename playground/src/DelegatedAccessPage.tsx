import {
  useActivity,
  useCreatePolicies,
  useCreateUsers,
  useDeletePolicy,
  usePolicies,
  usePolicyEvaluations,
  useSession,
} from 'latchkey'
import { useId, useState } from 'react'
import { delegationPolicies } from '../../examples/delegated-access.ts'

/**
 * The delegated-access recipe from the end user's side: grant the app's back end (its API key) a
 * policy "may send ETH to X on this chain only, at a bounded fee", see the organization's policies,
 * and look up any activity's decision with the outcome of every policy (DENY_EXPLICIT, ...).
 */
export function DelegatedAccessPage({
  openSignIn,
  chainId,
}: {
  openSignIn: () => void
  /** The chain the back end may pay on (the app's). */
  chainId: number
}) {
  const session = useSession()
  if (!session)
    return (
      <section className="pg-card" aria-labelledby="pg-delegated-title">
        <h1 id="pg-delegated-title">Delegated access</h1>
        <p className="pg-card-lead">
          Sign in as the end user to let your app’s back end sign for you, within a policy.
        </p>
        <button type="button" className="pg-button pg-button-primary" onClick={openSignIn}>
          Sign in
        </button>
      </section>
    )
  return (
    <>
      <GrantPanel organizationId={session.organizationId} chainId={chainId} />
      <PoliciesPanel />
      <ActivityPanel />
    </>
  )
}

const HEX_KEY = /^0[23][0-9a-fA-F]{64}$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/
/** Gwei as typed: digits, and at most nine decimals (a gwei is 10^9 wei). */
const GWEI = /^\d{1,9}(\.\d{1,9})?$/

/** `'1.5'` gwei → 1,500,000,000n wei; undefined for anything `GWEI` does not accept. */
function weiOfGwei(gwei: string): bigint | undefined {
  if (!GWEI.test(gwei)) return undefined
  const [whole = '0', fraction = ''] = gwei.split('.')
  return BigInt(whole) * 10n ** 9n + BigInt(fraction.padEnd(9, '0'))
}

function GrantPanel({ organizationId, chainId }: { organizationId: string; chainId: number }) {
  const createUsers = useCreateUsers()
  const createPolicies = useCreatePolicies()
  const [publicKey, setPublicKey] = useState('')
  const [recipient, setRecipient] = useState('')
  const [limit, setLimit] = useState(true)
  // The fee leaves the account too: without a ceiling, "1 wei to X" at 100,000 gwei a gas is 2.1 ETH.
  const [feeGwei, setFeeGwei] = useState('100')
  const [granted, setGranted] = useState<{ userId: string; policyIds: string[] } | null>(null)
  const [error, setError] = useState<string | null>(null)
  const keyId = useId()
  const recipientId = useId()
  const feeId = useId()
  const maxFeePerGas = weiOfGwei(feeGwei)
  const working = createUsers.isPending || createPolicies.isPending

  const grant = async () => {
    if (maxFeePerGas === undefined) return // the button is disabled
    setError(null)
    try {
      const { userIds } = await createUsers.mutateAsync({
        users: [
          {
            userName: 'App back end',
            apiKeys: [{ apiKeyName: 'back end', publicKey, curveType: 'API_KEY_CURVE_P256' }],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      })
      const userId = userIds[0] as string
      const { policyIds } = await createPolicies.mutateAsync({
        policies: delegationPolicies(userId, {
          recipient,
          chainId,
          maxFeePerGas,
          ...(limit ? { maxWei: 10n ** 18n } : {}),
        }),
      })
      setGranted({ userId, policyIds })
    } catch (failure) {
      setError((failure as Error).message)
    }
  }

  return (
    <section className="pg-card" aria-labelledby="pg-grant-title">
      <h1 id="pg-grant-title" style={{ fontSize: 20 }}>
        Grant your app’s back end access
      </h1>
      <p className="pg-card-lead">
        The back end becomes a user of your organization with its API key. It may send ETH to one address on
        chain {chainId}, and nothing else: no other chain, no contract calls, no fee above 21,000 gas at the
        price you set. Everything else stays yours alone.
      </p>
      <label className="pg-field" htmlFor={keyId}>
        <span>Back-end public key</span>
        <input
          id={keyId}
          className="pg-input pg-mono"
          placeholder="02… (compressed P-256)"
          value={publicKey}
          onChange={(e) => setPublicKey(e.target.value.trim())}
        />
      </label>
      <label className="pg-field" htmlFor={recipientId}>
        <span>Allowed recipient</span>
        <input
          id={recipientId}
          className="pg-input pg-mono"
          placeholder="0x…"
          value={recipient}
          onChange={(e) => setRecipient(e.target.value.trim())}
        />
      </label>
      <label className="pg-field" htmlFor={feeId}>
        <span>Highest fee per gas (gwei)</span>
        <input
          id={feeId}
          className="pg-input pg-mono"
          inputMode="decimal"
          value={feeGwei}
          onChange={(e) => setFeeGwei(e.target.value.trim())}
        />
      </label>
      <label className="pg-row" style={{ marginBottom: 12 }}>
        <input type="checkbox" checked={limit} onChange={(e) => setLimit(e.target.checked)} />
        <span>Refuse any transfer above 1 ETH</span>
      </label>
      <button
        type="button"
        className="pg-button pg-button-primary"
        onClick={grant}
        disabled={
          working || !HEX_KEY.test(publicKey) || !ADDRESS.test(recipient) || maxFeePerGas === undefined
        }
      >
        {working ? 'Granting…' : 'Grant access'}
      </button>
      <div aria-live="polite">
        {error ? (
          <p className="pg-error" role="alert">
            {error}
          </p>
        ) : null}
        {granted ? (
          <dl className="pg-result">
            <dt>Organization (give it to the back end)</dt>
            <dd data-testid="delegated-organization">{organizationId}</dd>
            <dt>Back-end user</dt>
            <dd data-testid="delegated-user">{granted.userId}</dd>
            <dt>Policies</dt>
            <dd>{granted.policyIds.join(', ')}</dd>
          </dl>
        ) : null}
      </div>
    </section>
  )
}

function PoliciesPanel() {
  const policies = usePolicies()
  const remove = useDeletePolicy()
  const list = policies.data?.policies ?? []
  return (
    <section className="pg-card" aria-labelledby="pg-policies-title">
      <h2 id="pg-policies-title">Policies</h2>
      {policies.isPending ? <p className="pg-muted">Loading…</p> : null}
      {policies.isSuccess && list.length === 0 ? <p className="pg-muted">No policies yet.</p> : null}
      <ul className="pg-list">
        {list.map((policy) => (
          <li key={policy.policyId}>
            <div style={{ display: 'grid', gap: 4, minWidth: 0 }}>
              <span>
                <span
                  className={`pg-badge ${policy.effect === 'EFFECT_ALLOW' ? 'pg-badge-ok' : 'pg-badge-bad'}`}
                >
                  {policy.effect === 'EFFECT_ALLOW' ? 'Allow' : 'Deny'}
                </span>{' '}
                {policy.policyName}
              </span>
              <code className="pg-mono" style={{ overflowWrap: 'anywhere' }}>
                {policy.condition || 'every activity'}
              </code>
              {policy.consensus ? (
                <code className="pg-mono" style={{ overflowWrap: 'anywhere' }}>
                  {policy.consensus}
                </code>
              ) : null}
            </div>
            <button
              type="button"
              className="pg-button pg-button-small"
              aria-label={`Delete policy ${policy.policyName}`}
              disabled={remove.isPending}
              onClick={() => remove.mutate({ policyId: policy.policyId })}
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
    </section>
  )
}

const OUTCOME_LABEL: Record<string, string> = {
  OUTCOME_ALLOW: 'Allowed',
  OUTCOME_DENY_EXPLICIT: 'Denied by a policy',
  OUTCOME_DENY_IMPLICIT: 'No policy allows it',
  OUTCOME_REQUIRES_CONSENSUS: 'Waiting for approvals',
  OUTCOME_REJECTED: 'Rejected',
  OUTCOME_ERROR: 'Policy error',
}

function ActivityPanel() {
  const inputId = useId()
  const [draft, setDraft] = useState('')
  const [activityId, setActivityId] = useState<string | undefined>(undefined)
  const activity = useActivity({ activityId })
  const evaluations = usePolicyEvaluations({ activityId })
  const policies = usePolicies()
  const latest = evaluations.data?.policyEvaluations.at(-1)?.policyEvaluations ?? []
  const decision = latest.find((entry) => entry.policyId === undefined)?.outcome
  const nameOf = (policyId: string) =>
    policies.data?.policies.find((policy) => policy.policyId === policyId)?.policyName ?? policyId
  return (
    <section className="pg-card" aria-labelledby="pg-activity-title">
      <h2 id="pg-activity-title">Activity</h2>
      <p className="pg-card-lead">
        Why an activity ran or was refused: the decision and each policy’s outcome. A refused request’s error
        carries its activity id.
      </p>
      <form
        className="pg-row"
        // The button lines up with the input, not with the label above it.
        style={{ alignItems: 'flex-end' }}
        onSubmit={(event) => {
          event.preventDefault()
          setActivityId(draft || undefined)
        }}
      >
        <label className="pg-field" htmlFor={inputId} style={{ flex: 1, margin: 0 }}>
          <span>Activity id</span>
          <input
            id={inputId}
            className="pg-input pg-mono"
            value={draft}
            onChange={(e) => setDraft(e.target.value.trim())}
          />
        </label>
        <button type="submit" className="pg-button" disabled={!draft}>
          Show
        </button>
      </form>
      <div aria-live="polite">
        {activity.isError ? (
          <p className="pg-error" role="alert">
            {activity.error.message}
          </p>
        ) : null}
        {activity.data ? (
          <dl className="pg-result">
            <dt>Type</dt>
            <dd>{activity.data.activity.type}</dd>
            <dt>Status</dt>
            <dd data-testid="activity-status">{activity.data.activity.status}</dd>
            <dt>Decision</dt>
            <dd>
              {decision ? (
                <span
                  className={`pg-badge ${decision === 'OUTCOME_ALLOW' ? 'pg-badge-ok' : 'pg-badge-bad'}`}
                  data-testid="decision"
                >
                  {decision}
                </span>
              ) : (
                '—'
              )}{' '}
              {decision ? OUTCOME_LABEL[decision] : null}
            </dd>
          </dl>
        ) : null}
        {activity.data && latest.some((entry) => entry.policyId !== undefined) ? (
          <table
            aria-label="Policy outcomes"
            // Fixed columns whose words break: an outcome like OUTCOME_DENY_EXPLICIT fits a 320 px phone.
            style={{
              width: '100%',
              borderCollapse: 'collapse',
              textAlign: 'start',
              tableLayout: 'fixed',
              overflowWrap: 'anywhere',
            }}
          >
            <thead>
              <tr>
                <th scope="col">Policy</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {latest.flatMap((entry) =>
                entry.policyId === undefined
                  ? []
                  : [
                      <tr key={entry.policyId}>
                        <td>{nameOf(entry.policyId)}</td>
                        <td className="pg-mono">{entry.outcome}</td>
                      </tr>,
                    ],
              )}
            </tbody>
          </table>
        ) : null}
      </div>
    </section>
  )
}
