// Node only: which reverse proxies `start` believes. A request whose socket peer is one of them
// gets what the proxy forwarded (client address, scheme, Host) in its env as `forwarded`, which
// `clientAddress` and `requestHost` read; from anyone else those headers are ignored.
import { BlockList, isIP } from 'node:net'
import { capturePeer, type ForwardedInfo, socketPeer } from '../pipeline/originPolicy.ts'

type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>

/** `::ffff:10.0.0.1` → `10.0.0.1`, brackets and a port dropped; undefined if not an address. */
function bareAddress(value: string): string | undefined {
  let address = value.trim().replace(/^"|"$/g, '')
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address)
  if (bracketed) address = bracketed[1]!
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'))
  if (address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4) address = address.slice(7)
  return isIP(address) === 0 ? undefined : address
}

/** The address list the operator configured (`server.trusted_proxies`), as a matcher. */
export function proxyMatcher(trusted: string[]): (address: string) => boolean {
  const list = new BlockList()
  for (const entry of trusted) {
    const [address, prefix] = entry.split('/')
    const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4'
    if (prefix === undefined) list.addAddress(address!, family)
    else list.addSubnet(address!, Number(prefix), family)
  }
  return (value) => {
    const address = bareAddress(value)
    return address !== undefined && list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')
  }
}

/** One `Forwarded` element's pairs (`for`, `proto`, `host`), values unquoted. */
function forwardedElements(header: string): Record<string, string>[] {
  return header.split(',').map((element) => {
    const pairs: Record<string, string> = {}
    for (const pair of element.split(';')) {
      const at = pair.indexOf('=')
      if (at < 0) continue
      pairs[pair.slice(0, at).trim().toLowerCase()] = pair
        .slice(at + 1)
        .trim()
        .replace(/^"|"$/g, '')
    }
    return pairs
  })
}

const lastOf = (header: string | null) =>
  header
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .at(-1)

/** The header families a proxy may say whom it forwards for by; `[server] forwarded_header` picks one. */
export const FORWARDED_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const
export type ForwardedHeader = (typeof FORWARDED_HEADERS)[number]

/**
 * What the proxies forwarded, read from the one header family the operator says its proxy sets
 * (`header`); the others are the client's own words and are ignored, so a client cannot add a
 * `Forwarded` that a proxy appending `X-Forwarded-For` passes through untouched. The client is
 * the rightmost address that is not itself a trusted proxy (the ones to its left were written by
 * the client and prove nothing); scheme and Host are the ones the nearest proxy wrote.
 */
export function forwardedInfo(
  headers: Headers,
  isTrusted: (address: string) => boolean,
  header: ForwardedHeader = 'x-forwarded-for',
): ForwardedInfo {
  let chain: string[]
  let proto: string | undefined
  let host: string | undefined
  if (header === 'forwarded') {
    const elements = forwardedElements(headers.get('forwarded') ?? '')
    chain = elements.map((element) => element.for ?? '')
    proto = elements.at(-1)?.proto
    host = elements.at(-1)?.host
  } else {
    chain = (headers.get(header) ?? '').split(',').map((item) => item.trim())
    proto = lastOf(headers.get('x-forwarded-proto'))
    host = lastOf(headers.get('x-forwarded-host'))
  }
  const addresses = chain.map(bareAddress)
  let client: string | undefined
  for (let i = addresses.length - 1; i >= 0; i--) {
    const address = addresses[i]
    if (address === undefined) break
    client = address
    if (!isTrusted(address)) break
  }
  const info: ForwardedInfo = {}
  if (client !== undefined) info.client = client
  if (proto === 'http' || proto === 'https') info.proto = proto
  if (host !== undefined && host !== '') info.host = host
  return info
}

/**
 * Wraps the app's `fetch` for `@hono/node-server`: every network request gets its socket peer read
 * as it arrives (`capturePeer`: read later, a client that reset its connection has none, and would
 * go unbudgeted); requests from a trusted proxy also carry what it forwarded (in `header`'s family)
 * in `env.forwarded`.
 */
export function trustProxies(
  fetch: FetchHandler,
  trusted: string[],
  header: ForwardedHeader = 'x-forwarded-for',
): FetchHandler {
  const isTrusted = proxyMatcher(trusted)
  return (request, received) => {
    const env = capturePeer(received)
    const peer = socketPeer(env)?.address
    if (peer === undefined || !isTrusted(peer)) return fetch(request, env)
    return fetch(request, {
      ...(env as object),
      forwarded: forwardedInfo(request.headers, isTrusted, header),
    })
  }
}
