import type { OtpType } from '@latchkey/protocol'
import { SESSION_CREDENTIAL_TYPES } from '../domain/sessions.ts'
import { verifiedContact } from '../domain/verifiedContact.ts'
import { CONTACT_CODES } from '../kernel/contactCodes.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { MfaPolicyRow, UserRow } from '../kernel/store/model.ts'
import { isExpired } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { CONTACT_METHODS, type Proof, provesMethod } from './mfaGate.ts'

type Steps = MfaPolicyRow['steps']

/** Whether a code can be sent to a contact (kernel `ContactCodes.reaches`). */
export type Reach = (otpType: OtpType, contact: string) => Promise<boolean>

/**
 * `runtime`'s answer to whether a code can reach a contact: the sign-in wing's (an SMS code only
 * to `[sms] allowed_countries`), or always without it.
 */
export function contactReach(runtime: Runtime): Reach {
  const codes = runtime.loadedState(CONTACT_CODES)
  return (otpType, contact) => (codes ? codes.reaches({ otpType, contact }) : Promise.resolve(true))
}

const OTP_TYPE_OF = { email: 'OTP_TYPE_EMAIL', phone: 'OTP_TYPE_SMS' } as const

/**
 * One proof the user can give, as `applyProof` will record it, and how many times: a policy counts
 * each (type, id) once (`mfaGate.applyProof`), so a passkey, an API key, a TOTP factor, the user's
 * verified e-mail or phone and "a session" (every session proves the same `id: ''`) each prove one
 * step of a policy; each recovery code proves one TOTP step whatever factor it names. `stamps`: a
 * credential an activity can be submitted with, whose proof the gate applies to the first step at
 * once when it proves it.
 */
interface Holding extends Proof {
  count: number
  stamps?: boolean
}

/** What `userId` holds to prove steps with, today (or as if the given changes were made). */
async function holdingsOf(
  reads: Reads,
  {
    userId,
    now,
    user: given,
    withoutFactorId,
    withoutCredentials,
    reaches,
  }: {
    userId: string
    now: number
    user?: UserRow | undefined
    withoutFactorId?: string | undefined
    withoutCredentials?: ReadonlySet<string> | undefined
    reaches: Reach
  },
): Promise<Holding[]> {
  const kept = (row: { id: string }) => !withoutCredentials?.has(row.id)
  const holdings: Holding[] = [{ type: 'AUTHENTICATION_TYPE_SESSION', id: '', count: 1, stamps: true }]
  for (const passkey of await reads.findBy('authenticators', 'userId', userId))
    if (kept(passkey))
      holdings.push({ type: 'AUTHENTICATION_TYPE_PASSKEY', id: passkey.id, count: 1, stamps: true })
  for (const key of await reads.findBy('apiKeys', 'userId', userId)) {
    if (SESSION_CREDENTIAL_TYPES.includes(key.credentialType) || !kept(key)) continue
    // An expired key authenticates nothing.
    if (isExpired(key, now)) continue
    holdings.push({ type: 'AUTHENTICATION_TYPE_API_KEY', id: key.id, count: 1, stamps: true })
  }
  for (const factor of await reads.findBy('mfaFactors', 'userId', userId))
    if (factor.confirmed && factor.id !== withoutFactorId)
      holdings.push({ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP', id: factor.id, count: 1 })
  const recovery = (await reads.findBy('mfaRecoveryCodes', 'userId', userId)).length
  if (recovery > 0)
    holdings.push({ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP', id: '', anyId: true, count: recovery })
  const user = given ?? (await reads.get('users', userId))
  for (const [type, kind] of Object.entries(CONTACT_METHODS)) {
    const contact = user && verifiedContact(user, kind)
    if (contact === undefined) continue
    // A verified contact no code can reach (a phone outside the operator's countries) proves nothing.
    if (!(await reaches(OTP_TYPE_OF[kind], contact))) continue
    holdings.push({ type, id: '', count: 1 })
  }
  return holdings
}

/**
 * The first step of `steps` (from `from`) that cannot get a proof of its own among `units` (one
 * entry per proof the user can give): steps before it can each be given a different one, steps up
 * to it cannot (augmenting paths, Kuhn's algorithm; a policy has at most 8 steps). -1 when all can.
 */
function firstUnmatched(steps: Steps, units: readonly Holding[], from: number): number {
  const owner = units.map(() => -1)
  const augment = (step: number, seen: boolean[]): boolean => {
    for (const [unit, holding] of units.entries()) {
      if (seen[unit] || !steps[step]!.any.some((method) => provesMethod(holding, method))) continue
      seen[unit] = true
      if (owner[unit]! < 0 || augment(owner[unit]!, seen)) {
        owner[unit] = step
        return true
      }
    }
    return false
  }
  for (let step = from; step < steps.length; step++) if (!augment(step, [])) return step
  return -1
}

/**
 * The step of `steps` the user could not reach, proving steps in order as the gate takes them: -1
 * when some way through exists. Each step needs a proof of its own (one credential, factor or
 * contact proves one step of a policy; `[SESSION], [SESSION]` can never be met), and the credential
 * the activity is submitted with proves the first step at once if it can: some credential the user
 * holds must leave the rest provable after that. Otherwise the step reported is the furthest any
 * credential gets.
 */
export function unmatchedStep(steps: Steps, holdings: readonly Holding[]): number {
  const units = holdings.flatMap((holding) =>
    Array.from({ length: Math.min(holding.count, steps.length) }, () => holding),
  )
  let furthest = -1
  for (const stamp of holdings.filter((holding) => holding.stamps)) {
    const first = steps[0]?.any.some((method) => provesMethod(stamp, method)) === true
    const step = first
      ? firstUnmatched(
          steps,
          units.filter((unit) => unit !== stamp),
          1,
        )
      : firstUnmatched(steps, units, 0)
    if (step < 0) return -1
    furthest = Math.max(furthest, step)
  }
  return furthest
}

/**
 * The step of `steps` the user could not prove today (`unmatchedStep`), or -1. A policy with such
 * a step locks its user out: their enrolment of what would prove it waits for the policy, and so
 * does the policy's own change or removal. `user`: as if the user row were this one (a contact
 * change about to be written); `withoutFactorId`, `withoutCredentials`: as if that TOTP factor, or
 * those passkeys or API keys, were gone. Expired API keys prove nothing, nor does a verified contact
 * `reaches` says no code can be sent to.
 */
export async function unprovableStep(
  reads: Reads,
  options: {
    userId: string
    steps: Steps
    now: number
    user?: UserRow
    withoutFactorId?: string
    withoutCredentials?: ReadonlySet<string>
    /** Whether a code reaches a contact (`contactReach`). */
    reaches: Reach
  },
): Promise<number> {
  return unmatchedStep(options.steps, await holdingsOf(reads, options))
}

/** What a policy is judged on: its steps, and its user's holdings now (`user`: their row as it was). */
type Judged = { userId: string; steps: Steps; now: number; reaches: Reach; user?: UserRow }

/**
 * The step of a policy a change leaves its user unable to prove (`unprovableStep` with the change
 * applied), or -1: also -1 when nothing could meet the policy before the change, which is then not
 * this change's doing. The contact guard and a TOTP factor's removal ask it.
 */
export async function stepLostBy(
  reads: Reads,
  judged: Judged,
  change: Pick<Parameters<typeof unprovableStep>[1], 'user' | 'withoutFactorId' | 'withoutCredentials'>,
): Promise<number> {
  const step = await unprovableStep(reads, { ...judged, ...change })
  if (step < 0 || (await unprovableStep(reads, judged)) >= 0) return -1
  return step
}
