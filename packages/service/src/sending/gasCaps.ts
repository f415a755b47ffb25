import { ApiError } from '../errors.ts'
import type { ActivityContext } from '../registry.ts'
import type { GasCaps } from './SendingOptions.ts'

const utcDay = (now: number) => new Date(now).toISOString().slice(0, 10)
const utcMonth = (now: number) => new Date(now).toISOString().slice(0, 7)

/**
 * Refuses a sponsored send whose gas limit would pass a cap (`GAS_CAP_EXCEEDED`, before anything is
 * signed), else counts it. Runs in the activity's transaction: two sends counted at once on two
 * instances read and write the same ranges, so the database serialises them and the cap holds.
 * The organization is the parent of a sub-organization (the app), the user the caller.
 */
export async function checkGasCaps(
  ctx: ActivityContext,
  send: { gas: bigint; sendTransactionId: string },
): Promise<void> {
  const sponsorship = ctx.runtime.options.sponsorship
  const organizationId = ctx.organization.parentOrganizationId ?? ctx.organization.id
  const caps: GasCaps = sponsorship?.organizationCaps?.[organizationId] ?? sponsorship?.caps ?? {}
  const userDay = `${organizationId}|${ctx.caller.userId}|${utcDay(ctx.now)}`
  const organizationMonth = `${organizationId}|${utcMonth(ctx.now)}`
  const refuse = (what: string, cap: number, used: bigint) => {
    ctx.runtime.emit('send.capExceeded', { cap: what })
    return new ApiError(
      'GAS_CAP_EXCEEDED',
      `this sponsored send needs ${send.gas} gas; the ${what} cap is ${cap}${used > 0n ? ` and ${used} is used` : ''}`,
      'parameters.sponsor',
      { cap: what },
    )
  }
  if (caps.perTransaction !== undefined && send.gas > BigInt(caps.perTransaction))
    throw refuse('per-transaction', caps.perTransaction, 0n)
  const sum = (rows: { gas: string }[]) => rows.reduce((total, row) => total + BigInt(row.gas), 0n)
  if (caps.perUserPerDay !== undefined) {
    const used = sum(await ctx.tx.findBy('gasUsage', 'userDay', userDay))
    if (used + send.gas > BigInt(caps.perUserPerDay)) throw refuse('per-user daily', caps.perUserPerDay, used)
  }
  if (caps.perOrganizationPerMonth !== undefined) {
    const used = sum(await ctx.tx.findBy('gasUsage', 'organizationMonth', organizationMonth))
    if (used + send.gas > BigInt(caps.perOrganizationPerMonth))
      throw refuse('per-organization monthly', caps.perOrganizationPerMonth, used)
  }
  await ctx.tx.put('gasUsage', {
    id: ctx.newId(),
    userDay,
    organizationMonth,
    gas: send.gas.toString(),
    sendTransactionId: send.sendTransactionId,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  })
}
