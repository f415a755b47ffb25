import ipaddr from 'ipaddr.js'

/**
 * Where a tenant's webhook may go. A tenant chooses the URL, so in production only `https` to
 * public unicast addresses: never loopback, private (RFC 1918, ULA), link-local (the cloud metadata
 * address 169.254.169.254 among them), CGNAT, multicast, unspecified, reserved or broadcast
 * addresses, nor an IPv6 form that embeds an IPv4 one (IPv4-mapped ones judged as the IPv4 address they
 * carry; IPv4-compatible, NAT64, 6to4 and Teredo refused), nor a deprecated site-local one.
 * The check runs on the literal host at creation and on every resolved address at delivery, on
 * the address the connection is then pinned to (so a rebinding name cannot swap it afterwards).
 * `allowList` (CIDRs, operator-set) lets internal receivers through, for the endpoints of top-level
 * organizations only (the operator's own: `policyForOrganization`); `dev` lets loopback through
 * for every organization, an operator's explicit `allowLoopback` for top-level ones only.
 */
export interface AddressPolicy {
  /** Only `https` URLs (production); `dev` allows `http` too. */
  requireHttps: boolean
  /** Loopback addresses and `localhost` allowed (`dev`'s default). */
  allowLoopback: boolean
  /**
   * Loopback was allowed by the operator (`allowLoopback: true` given), not by `dev`'s default:
   * then, like the allow list, only for the endpoints of top-level organizations.
   */
  loopbackTopLevelOnly?: boolean
  /**
   * CIDRs (or single addresses) the operator allows even though they are not public: for its own
   * receivers, so only a top-level organization's endpoints get them (`policyForOrganization`).
   */
  allowList: readonly string[]
}

/** Whether `policyForOrganization` needs the endpoint's organization (else it returns `policy`). */
export const dependsOnOrganization = (policy: AddressPolicy): boolean =>
  policy.allowList.length > 0 || (policy.allowLoopback && policy.loopbackTopLevelOnly === true)

/**
 * The rules for an endpoint of `organization`: the service's, but a sub-organization's (an end
 * user's, one per sign-up) gets no allow list, nor loopback the operator allowed. The operator
 * listed its own internal receivers; an end user's endpoint into that range would make the service
 * POST into the operator's network and read back what answered (`lastStatus`, `lastError`). An
 * organization not known (`undefined`: not found) is judged as a sub-organization's.
 */
export function policyForOrganization(
  policy: AddressPolicy,
  organization: { parentOrganizationId?: string | undefined } | undefined,
): AddressPolicy {
  if (!dependsOnOrganization(policy)) return policy
  return organization !== undefined && organization.parentOrganizationId === undefined
    ? policy
    : {
        ...policy,
        allowList: [],
        allowLoopback: policy.allowLoopback && policy.loopbackTopLevelOnly !== true,
      }
}

/** Why an address or URL is refused (bounded: counted in metrics, shown in errors). */
export type RefusalReason =
  | 'scheme'
  | 'credentials'
  | 'invalid_url'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'multicast'
  | 'reserved'
  | 'unspecified'
  | 'localhost'

const RANGE_REASON: Record<string, RefusalReason> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private',
  linkLocal: 'link_local',
  carrierGradeNat: 'cgnat',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'reserved',
  reserved: 'reserved',
  benchmarking: 'reserved',
  amt: 'reserved',
  as112: 'reserved',
  as112v6: 'reserved',
  deprecated: 'reserved',
  orchid2: 'reserved',
  droneRemoteIdProtocolEntityTags: 'reserved',
  teredo: 'reserved',
  '6to4': 'reserved',
  rfc6145: 'reserved',
  rfc6052: 'reserved',
  discard: 'reserved',
}

/** The parsed allow-list (thrown on a bad entry, naming it: the operator's configuration). */
export function parseAllowList(entries: readonly string[]): [ipaddr.IPv4 | ipaddr.IPv6, number][] {
  return entries.map((entry) => {
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry)
      const address = ipaddr.parse(entry)
      return [address, address.kind() === 'ipv4' ? 32 : 128]
    } catch {
      throw new Error(`webhooks.allow_list: ${JSON.stringify(entry)} is not an IP address or CIDR`)
    }
  })
}

/**
 * The refusal for one IP address, or undefined when `policy` lets it through. IPv4-mapped IPv6
 * (`::ffff:127.0.0.1`) is judged as the IPv4 address it carries.
 */
export function refuseAddress(address: string, policy: AddressPolicy): RefusalReason | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.process(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''))
  } catch {
    return 'invalid_url'
  }
  for (const [range, bits] of parseAllowList(policy.allowList))
    if (range.kind() === parsed.kind() && parsed.match(range, bits)) return undefined
  const range = parsed.range()
  // IPv4-compatible IPv6 (`::/96`, deprecated by RFC 4291): ipaddr.js calls it unicast, and the
  // URL parser writes `[::127.0.0.1]` so. Nothing public is reached that way: refused.
  if (
    range === 'unicast' &&
    parsed.kind() === 'ipv6' &&
    (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)
  )
    return 'reserved'
  if (range === 'unicast') return undefined
  const reason = RANGE_REASON[range] ?? 'reserved'
  if (reason === 'loopback' && policy.allowLoopback) return undefined
  return reason
}

/** The URL's checks before any DNS: scheme, no credentials, a literal address checked at once. */
export function refuseUrl(url: string, policy: AddressPolicy): RefusalReason | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'invalid_url'
  }
  if (parsed.protocol !== 'https:' && !(!policy.requireHttps && parsed.protocol === 'http:')) return 'scheme'
  if (parsed.username || parsed.password) return 'credentials'
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  if (ipaddr.isValid(host)) return refuseAddress(host, policy)
  const name = host.toLowerCase().replace(/\.$/, '')
  if ((name === 'localhost' || name.endsWith('.localhost')) && !policy.allowLoopback) return 'localhost'
  return undefined
}

/** A sentence for a refusal, for the 400 at creation and the delivery's recorded error. */
export function describeRefusal(reason: RefusalReason): string {
  switch (reason) {
    case 'scheme':
      return 'must be an https URL'
    case 'credentials':
      return 'must not carry a user name or password'
    case 'invalid_url':
      return 'must be an absolute URL'
    case 'localhost':
      return 'must not name localhost'
    default:
      return `must reach a public address (refused: ${reason.replace('_', '-')} address)`
  }
}
