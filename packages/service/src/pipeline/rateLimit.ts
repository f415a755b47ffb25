import { type ApiError, LimitError } from '../kernel/base/errors.ts'
import type { Caller } from '../kernel/Caller.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { Registry } from '../kernel/registry.ts'
import type { OrganizationRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import type { RateLimit, RateLimitName, RateLimitOptions } from './RateLimitOptions.ts'
import { type Charge, databaseCounters, memoryCounters, type RateLimitCounters } from './rateLimitCounters.ts'

/** Each service's counters, made on first use (held per runtime so services in one process stay apart). */
const countersOf = new WeakMap<Runtime, RateLimitCounters>()

function counters(runtime: Runtime): RateLimitCounters {
  let found = countersOf.get(runtime)
  if (!found) {
    // A process that is its database's only writer sees every request, so memory is exact there;
    // several instances on one database share their buckets in it.
    found = runtime.store.backend.cachesReads ? memoryCounters() : databaseCounters(runtime.store)
    countersOf.set(runtime, found)
  }
  return found
}

const chargeOf = (key: string, limit: RateLimit): Charge => {
  const intervalMs = 1000 / limit.perSecond
  return { key, intervalMs, toleranceMs: (Math.max(limit.burst ?? limit.perSecond, 1) - 1) * intervalMs }
}

const WHO: Record<RateLimitName, string> = {
  perKey: 'from this credential',
  perOrganization: 'in this organization',
  perClientAddress: 'from this address',
}

/** The 429 of a spent budget: names it, and says when to come back (`Retry-After`). */
function refusal(name: RateLimitName, limit: RateLimit, retryAfterMs: number): ApiError {
  const burst = limit.burst ?? limit.perSecond
  return new LimitError({
    message: `more than ${limit.perSecond} requests per second${burst !== limit.perSecond ? ` (burst ${burst})` : ''} ${WHO[name]}`,
    extra: {
      limit: name,
      perSecond: limit.perSecond,
      burst,
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    },
  })
}

/**
 * The budget key of a client address: an IPv4 address itself, also when it comes as an IPv6 one
 * that carries it (`ipv4Within`: IPv4-mapped, NAT64, 6to4, Teredo), so a translator or a relay
 * writing many IPv4 clients in one IPv6 block gives each its own budget and an IPv4 holder gets
 * none beyond its IPv4 one; an IPv6 address by its /64, the smallest block one subscriber is
 * usually given (so rotating through one's own 2^64 addresses buys nothing).
 */
export function addressBudgetKey(address: string): string {
  const client = clientAddressOf(address)
  if ('ipv4' in client) return client.ipv4
  return `${client.groups
    .slice(0, 4)
    .map((group, i) => client.hex[i]?.toString(16) ?? group)
    .join(':')}::/64`
}

/**
 * The budget keys of an IPv6 client's /56 and /48, the blocks one holder gets whole and routinely
 * (a household, a cloud tenant, a tunnel broker); undefined for an IPv4 client (however it comes,
 * as `addressBudgetKey` reads it) and for an address it cannot read.
 */
export function ipv6NetworkKeys(address: string): { slash56: string; slash48: string } | undefined {
  const client = clientAddressOf(address)
  if ('ipv4' in client) return undefined
  const [a, b, c, d] = client.hex
  if (a === undefined || b === undefined || c === undefined || d === undefined) return undefined
  const head = [a, b, c].map((group) => group.toString(16)).join(':')
  return { slash56: `${head}:${(d & 0xff00).toString(16)}::/56`, slash48: `${head}::/48` }
}

/** A client address as the budgets read it: an IPv4 address, or an IPv6 one's 8 groups. */
function clientAddressOf(
  address: string,
): { ipv4: string } | { groups: string[]; hex: (number | undefined)[] } {
  let bare = address.trim().toLowerCase()
  const zone = bare.indexOf('%')
  if (zone >= 0) bare = bare.slice(0, zone)
  if (!bare.includes(':')) return { ipv4: bare }
  const groups = ipv6Groups(bare)
  const hex = groups.map((group) => (/^[0-9a-f]{1,4}$/.test(group) ? Number.parseInt(group, 16) : undefined))
  const ipv4 = groups.length === 8 ? ipv4Within(hex) : undefined
  return ipv4 ? { ipv4 } : { groups, hex }
}

/**
 * The IPv4 client an IPv6 address stands for, when it is one whose return traffic goes to that
 * IPv4 address (so a TCP client holds it, and writing it costs no one else's budget):
 * - IPv4-mapped `::ffff:0:0/96`, and NAT64 (RFC 6052, RFC 8215): the well-known prefix
 *   `64:ff9b::/96` and the local-use `64:ff9b:1::/48` (a translator's /96 in it), where a
 *   translator in front of an IPv6-only service writes every IPv4 client (keyed by the /64, /56
 *   and /48, they all once shared one budget, and one client spending it refused everyone's
 *   codes); the last 32 bits.
 * - 6to4 `2002::/16` (RFC 3056): the /48 an IPv4 holder derives from its address (bits 16-47),
 *   which was a /64, /56 and /48 budget on top of its IPv4 one.
 * - Teredo `2001::/32` (RFC 4380): the client's public IPv4 address, the last 32 bits inverted;
 *   the /64 is the Teredo server's, which every client of that server shared.
 */
function ipv4Within(hex: (number | undefined)[]): string | undefined {
  const [a, b, c, d, e, f, g, h] = hex
  if (hex.some((group) => group === undefined)) return undefined
  const dotted = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
  const zeros = (...groups: (number | undefined)[]) => groups.every((group) => group === 0)
  if (zeros(a, b, c, d, e) && f === 0xffff) return dotted(g!, h!)
  if (a === 0x64 && b === 0xff9b && zeros(c, d, e, f)) return dotted(g!, h!)
  if (a === 0x64 && b === 0xff9b && c === 1) return dotted(g!, h!)
  if (a === 0x2002) return dotted(b!, c!)
  if (a === 0x2001 && b === 0) return dotted(g! ^ 0xffff, h! ^ 0xffff)
  return undefined
}

/** An IPv6 address's 8 groups, `::` expanded and an embedded IPv4 tail written as two groups. */
function ipv6Groups(address: string): string[] {
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'))
  const asHex = (groups: string[]) => {
    const tail = groups.at(-1)
    const octets = tail?.split('.').map(Number)
    if (
      octets?.length !== 4 ||
      !octets.every((octet) => Number.isInteger(octet) && octet >= 0 && octet < 256)
    )
      return groups
    const [a, b, c, d] = octets as [number, number, number, number]
    return [...groups.slice(0, -1), ((a << 8) | b).toString(16), ((c << 8) | d).toString(16)]
  }
  const compressed = address.indexOf('::')
  if (compressed < 0) return asHex(groupsOf(address))
  const head = groupsOf(address.slice(0, compressed))
  const tail = asHex(groupsOf(address.slice(compressed + 2)))
  return [...head, ...Array.from({ length: Math.max(0, 8 - head.length - tail.length) }, () => '0'), ...tail]
}

/**
 * Charges an anonymous auth-proxy call (`/v1/*`) to its client address's budget
 * (`limits.perClientAddress`, when configured: the proxy's middleware passes the service's
 * `rateLimits`) and refuses it with 429 `RATE_LIMITED` and `retryAfterSeconds` when it is spent.
 * `address` is `clientAddress`'s: undefined only for an in-process call, which is not charged (a
 * network request whose address is unknown never gets here: `clientAddress` refuses it).
 */
export async function rateLimitClient(
  runtime: Runtime,
  limits: RateLimitOptions | undefined,
  address: string | undefined,
): Promise<void> {
  const limit = limits?.perClientAddress
  if (!limit || address === undefined) return
  const [result] = await counters(runtime).charge(
    [chargeOf(`ip:${addressBudgetKey(address)}`, limit)],
    runtime.now(),
  )
  if (!result || result.allowed) return
  runtime.emit('rate_limit.refused', { limit: 'perClientAddress', kind: 'proxy' })
  throw refusal('perClientAddress', limit, result.retryAfterMs)
}

/**
 * Charges an admitted request to its credential's and its organization's budgets (whichever of
 * `limits`, `activityApi`'s `rateLimits`, are configured) and refuses it with 429 `RATE_LIMITED`
 * and `retryAfterSeconds` when one is spent. A
 * plugin's own service user (the auth proxy's) is neither refused nor charged: it forwards
 * anonymous traffic, which `rateLimitClient` budgets per client address, and must not spend the
 * budget of the organization it acts in (the operator's own keys would get the 429s).
 */
export async function rateLimit(
  runtime: Runtime,
  registry: Registry,
  limits: RateLimitOptions | undefined,
  request: { kind: 'activity' | 'query'; caller: Caller; organization: OrganizationRow; reads?: Reads },
): Promise<void> {
  if (!limits?.perKey && !limits?.perOrganization) return
  for (const plugin of registry.plugins)
    if (await plugin.ownsCaller?.(request.caller, runtime, request.reads)) return
  const named: [RateLimitName, RateLimit, Charge][] = []
  if (limits.perKey)
    named.push(['perKey', limits.perKey, chargeOf(`key:${request.caller.credential.id}`, limits.perKey)])
  if (limits.perOrganization)
    named.push([
      'perOrganization',
      limits.perOrganization,
      chargeOf(`org:${request.organization.id}`, limits.perOrganization),
    ])
  const results = await counters(runtime).charge(
    named.map(([, , charge]) => charge),
    runtime.now(),
  )
  const refused = results.findIndex((result) => !result.allowed)
  if (refused === -1) return
  const [name, limit] = named[refused]!
  const result = results[refused] as { retryAfterMs: number }
  runtime.emit('rate_limit.refused', { limit: name, kind: request.kind })
  throw refusal(name, limit, result.retryAfterMs)
}
