// What each sponsor account holds, looked at in the background: the admin `/readyz` reads the last
// look (the sending wing's `readiness`), and each balance read is reported as a `sponsor.balance`
// event that the metrics keep, so a probe or a scrape never costs an RPC call.
import { recordAppEvent } from '../kernel/appEvents.ts'
import { lookEvery } from '../kernel/base/async.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import { SENDING } from './sendingState.ts'
import { sendRpc } from './sendRpc.ts'
import { loadedSponsors, type SponsorFamily } from './sponsors.ts'

/** One sponsor account on one chain, as last looked at. */
export interface SponsorBalance {
  /** `default` or the organization id the sponsor pays for. */
  owner: string
  family: SponsorFamily
  /** The address the operator funds. */
  address: string
  caip2: string
  /** Wei (EVM) or lamports (Solana), decimal; null until the node answered once. */
  balance: string | null
  /** Below the operator's threshold (`low_balance_wei` / `low_balance_lamports`); null when no threshold or no balance. */
  low: boolean | null
  /** When the balance was read (ms since the epoch); null when never. */
  checkedAt: number | null
}

export interface SponsorBalanceOptions {
  /** Below this many wei a sponsor counts as low. @default no threshold */
  lowWei?: bigint | undefined
  /** Below this many lamports a Solana fee payer counts as low. @default no threshold */
  lowLamports?: bigint | undefined
  /** Time between looks, in ms. @default 60000 */
  intervalMs?: number
  /** EVM chains the sponsors pay on (the delegates' chains); Solana: every `solana:` chain of `rpc`. */
  evmChains: string[]
}

export interface SponsorBalanceWatch {
  /** The last look at every sponsor on every chain (balance null until read). */
  latest(): SponsorBalance[]
  /** Takes a look now (at most one at a time); resolves when it is done. */
  refresh(): Promise<void>
  stop(): void
}

const WATCHES = new WeakMap<Runtime, SponsorBalanceWatch>()

/** The watch started for this service, if any (the sending wing's readiness reads it). */
export function sponsorBalancesOf(runtime: Runtime): SponsorBalanceWatch | undefined {
  return WATCHES.get(runtime)
}

/** The `pluginRows` kind of the rows that say which sponsors are below their threshold. */
export const SPONSOR_LOW_KIND = 'sponsor-low'

/** One row per sponsor and chain, shared by every instance: the low state is the database's, not a process's. */
const lowRowId = (entry: SponsorBalance) => `${SPONSOR_LOW_KIND}|${entry.owner}|${entry.caip2}`

/**
 * Keeps the database's low state of `entry` in step with the balance just read. A sponsor that
 * just went below its threshold is a `LATCHKEY_SPONSOR_BALANCE_LOW` app event (webhooks) for the
 * organization it pays for, or, for the service's default sponsor, for every top-level
 * organization that has a webhook endpoint (the apps whose sends it pays). Once per crossing
 * service-wide: the state is read and flipped in one transaction (SERIALIZABLE on PostgreSQL), so
 * of several instances reading the same low balance, and of a restarted one, only the first
 * records the event. A look that agrees with the row costs one read and writes nothing.
 */
async function recordCrossing(
  runtime: Runtime,
  entry: SponsorBalance & { threshold: string },
): Promise<void> {
  const id = lowRowId(entry)
  const low = entry.low === true
  if (((await runtime.store.get('pluginRows', id))?.data.low === true) === low) return
  const data = {
    owner: entry.owner,
    caip2: entry.caip2,
    address: entry.address,
    balance: entry.balance ?? '0',
    threshold: entry.threshold,
  }
  const eventId = `evt_${runtime.newId()}`
  await runtime.store.transaction(async (tx) => {
    const current = await tx.get('pluginRows', id)
    if ((current?.data.low === true) === low) return
    const now = runtime.now()
    await tx.put('pluginRows', {
      id,
      kind: SPONSOR_LOW_KIND,
      data: { low, balance: data.balance, threshold: data.threshold, checkedAt: now },
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
    })
    if (!low) return
    const organizations =
      entry.owner === 'default'
        ? await topLevelOrganizations(tx)
        : [{ id: entry.owner, parentOrganizationId: undefined as string | undefined }]
    for (const organization of organizations)
      await recordAppEvent(runtime, tx, {
        id: `${eventId}.${organization.id}`,
        organization,
        type: 'LATCHKEY_SPONSOR_BALANCE_LOW',
        data,
      })
  })
}

/**
 * The top-level organizations, for the default sponsor's crossing: the service's own, which the
 * service row names (the production parent organization `init` made, the dev organization of
 * `dev`; nothing else makes an organization without a parent). A few reads by id, however many
 * end users (sub-organizations) have endpoints of their own: this runs in the crossing's
 * SERIALIZABLE transaction. `recordAppEvent` then reads each one's endpoints by the
 * `organizationId` index (at most `MAX_ENDPOINTS`) and writes nothing for one without a subscriber.
 */
async function topLevelOrganizations(tx: Transaction) {
  const service = await tx.get('service', 'service')
  const ids = new Set(
    [service?.parentOrganizationId, service?.devOrganizationId].filter((id) => id !== undefined),
  )
  const organizations = []
  for (const id of ids) {
    const row = await tx.get('organizations', id)
    if (row && row.parentOrganizationId === undefined)
      organizations.push({ id, parentOrganizationId: undefined })
  }
  return organizations
}

/**
 * Reads every loaded sponsor's balance on each chain it pays on, now and then every `intervalMs`
 * (one look at a time; a node that does not answer keeps the last balance read). Never makes the
 * service unready: a low balance is the operator's to fund, and sends that cannot pay fail on their own.
 */
export function watchSponsorBalances(runtime: Runtime, options: SponsorBalanceOptions): SponsorBalanceWatch {
  const intervalMs = options.intervalMs ?? 60_000
  const { rpc, sending } = runtime.stateOf(SENDING)
  const entries: SponsorBalance[] = []
  for (const row of loadedSponsors(runtime)) {
    const owner = row.id.slice(0, row.id.lastIndexOf('|'))
    const chains =
      row.family === 'eip155'
        ? options.evmChains.filter((caip2) => rpc[caip2] !== undefined)
        : Object.keys(rpc).filter((caip2) => caip2.startsWith('solana:'))
    for (const caip2 of chains)
      entries.push({
        owner,
        family: row.family as SponsorFamily,
        address: row.address,
        caip2,
        balance: null,
        low: null,
        checkedAt: null,
      })
  }
  const timeoutMs = sending.rpcTimeoutMs
  const lookOne = async (entry: SponsorBalance) => {
    const call = sendRpc(rpc[entry.caip2]!, runtime.options.fetch, timeoutMs)
    try {
      const balance =
        entry.family === 'eip155'
          ? BigInt((await call('eth_getBalance', [entry.address, 'latest'])) as string)
          : BigInt(((await call('getBalance', [entry.address])) as { value: number | string }).value)
      const threshold = entry.family === 'eip155' ? options.lowWei : options.lowLamports
      entry.balance = balance.toString()
      entry.low = threshold === undefined ? null : balance < threshold
      entry.checkedAt = runtime.now()
      const { owner, family, caip2, low } = entry
      runtime.emit('sponsor.balance', { owner, family, caip2, balance: entry.balance, low })
      if (threshold !== undefined)
        await recordCrossing(runtime, { ...entry, threshold: threshold.toString() }).catch(() => undefined)
    } catch {
      // Unreachable or an answer that is not a balance: the last look stands (checkedAt says how old).
    }
  }
  const looks =
    entries.length > 0
      ? lookEvery(intervalMs, async () => {
          await Promise.all(entries.map(lookOne))
        })
      : undefined
  const watch: SponsorBalanceWatch = {
    latest: () => entries.map((entry) => ({ ...entry })),
    refresh: () => looks?.refresh() ?? Promise.resolve(),
    stop: () => looks?.stop(),
  }
  WATCHES.set(runtime, watch)
  return watch
}
