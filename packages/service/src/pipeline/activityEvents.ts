import { type AppEvent, recordAppEvent } from '../kernel/appEvents.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ActivityRow, OrganizationRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'

const DENIALS = new Set(['OUTCOME_DENY_EXPLICIT', 'OUTCOME_DENY_IMPLICIT'])
const EXPORTS = new Set(['export_wallet', 'export_private_key', 'export_wallet_account'])

/**
 * The app events of an activity just decided in `tx` (webhooks, kernel/appEvents.ts): its
 * `ACTIVITY_UPDATES`, a policy denial, and what a completed activity made (a sub-organization, a
 * wallet, an export). Ids derive from the activity's, so a rerun of the transaction writes the
 * same events; a replay never gets here. An activity run later (after consensus or MFA) gets its
 * events from the transaction that runs it (activities/voteOnActivity.ts).
 */
export async function recordActivityEvents(
  runtime: Runtime,
  tx: Transaction,
  activity: {
    row: ActivityRow
    organization: OrganizationRow
    outcome: string | undefined
    /**
     * The activity changed status after its submission (run after consensus or MFA, rejected,
     * held by a gate): its ACTIVITY_UPDATES id names the status, each change being its own event.
     */
    later?: boolean
  },
): Promise<void> {
  const { row, organization, outcome } = activity
  const organizationRef = { id: organization.id, parentOrganizationId: organization.parentOrganizationId }
  const events: AppEvent[] = [
    {
      id: activity.later ? `${row.id}.activity.${row.status}` : `${row.id}.activity`,
      organization: organizationRef,
      type: 'ACTIVITY_UPDATES',
      data: { activityId: row.id, activityType: row.type, activityStatus: row.status, userId: row.userId },
    },
  ]
  if (outcome && DENIALS.has(outcome))
    events.push({
      id: `${row.id}.denied`,
      organization: organizationRef,
      type: 'LATCHKEY_POLICY_DENIED',
      data: { activityId: row.id, activityType: row.type, outcome, userId: row.userId },
    })
  if (row.status === 'ACTIVITY_STATUS_COMPLETED') events.push(...madeBy(row, organizationRef))
  for (const event of events) await recordAppEvent(runtime, tx, event)
}

/** What a completed activity made, as Latchkey's own events. */
function madeBy(row: ActivityRow, organization: AppEvent['organization']): AppEvent[] {
  const result = (row.result ?? {}) as Record<string, unknown>
  if (row.path === 'create_wallet' && typeof result.walletId === 'string')
    return [
      {
        id: `${row.id}.wallet`,
        organization,
        type: 'LATCHKEY_WALLET_CREATED',
        data: { walletId: result.walletId, addresses: (result.addresses as string[] | undefined) ?? [] },
      },
    ]
  if (row.path === 'create_sub_organization' && typeof result.subOrganizationId === 'string') {
    const wallet = result.wallet as { walletId: string; addresses: string[] } | undefined
    return [
      {
        id: `${row.id}.signup`,
        organization,
        type: 'LATCHKEY_SIGN_UP',
        data: {
          subOrganizationId: result.subOrganizationId,
          rootUserIds: (result.rootUserIds as string[] | undefined) ?? [],
          ...(wallet ? { walletId: wallet.walletId } : {}),
        },
      },
      ...(wallet
        ? [
            {
              id: `${row.id}.wallet`,
              organization: { id: result.subOrganizationId, parentOrganizationId: organization.id },
              type: 'LATCHKEY_WALLET_CREATED' as const,
              data: { walletId: wallet.walletId, addresses: wallet.addresses },
            },
          ]
        : []),
    ]
  }
  if (EXPORTS.has(row.path)) {
    // The target key and the bundle stay out: only what was exported, and by whom.
    const of = (key: string) => (typeof result[key] === 'string' ? { [key]: result[key] as string } : {})
    return [
      {
        id: `${row.id}.export`,
        organization,
        type: 'LATCHKEY_EXPORT',
        data: {
          activityType: row.type,
          userId: row.userId,
          ...of('walletId'),
          ...of('privateKeyId'),
          ...of('address'),
        },
      },
    ]
  }
  return []
}
