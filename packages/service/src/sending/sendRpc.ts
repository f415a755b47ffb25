import { ApiError, FieldError, ServiceError, UnavailableError } from '../kernel/base/errors.ts'
/** The node could not be reached or did not answer in time: the call may be retried. */
export class RpcUnreachableError extends ServiceError {
  override name = 'RpcUnreachableError'
}

/**
 * The node answered with a JSON-RPC error. `message` is its text as it may be shown (`redact`ed:
 * what callers, stored rows and logs see); `nodeText` is the node's own words, what a sender
 * classifies the refusal by ("already known", "nonce too low"), which the redaction may have
 * rewritten (a URL part that is one of those words). `nodeText` is not enumerable, so that no
 * serialisation, spread or log of the error carries it: read it, never pass it on.
 */
export class RpcRefusedError extends ServiceError {
  override name = 'RpcRefusedError'
  declare readonly nodeText: string
  constructor(
    message: string,
    readonly data?: string,
    nodeText: string = message,
  ) {
    super(message)
    Object.defineProperty(this, 'nodeText', { value: nodeText, enumerable: false })
  }
}

/**
 * One JSON-RPC call to a node. `redact`, where given (`sendRpc` gives it), is `redactNodeMessage`
 * knowing this node's URL: what any text of the node's own must go through before it is passed on.
 */
export type SendRpc = ((method: string, params: unknown[]) => Promise<unknown>) & {
  readonly redact?: (text: string) => string
}

/** A JSON-RPC quantity (0x hex, at most 256 bits) as a number; undefined when absent or not one. */
export function rpcQuantity(value: unknown): bigint | undefined {
  return typeof value === 'string' && /^0x[0-9a-f]{1,64}$/i.test(value) ? BigInt(value) : undefined
}

/** Longest part of a node's JSON-RPC error message passed on. */
const MAX_NODE_MESSAGE = 300

/** Shortest part of a node's URL treated as a secret wherever the node's text quotes it. */
const MIN_SECRET = 6

/**
 * The parts of a node's URL that may be a credential, as a node or gateway might quote them
 * without the URL around them ("quota exceeded for key KEY (POST /v2/KEY)"): the user name and
 * password, the Basic authorization `sendRpc` sends for them (`basicCredentials`), each path
 * segment, each query name and value (the query split on `&` and `=` as written: a key may be a
 * bare `?KEY`, and `+` stays a `+`), and the whole path, each as written, decoded (a query's `+`
 * also as the space a form decoding reads) and encoded again; those shorter than 6 characters are
 * left out (no key is that short, and hiding "v2" or "rpc" wherever a node's message says it would
 * garble the words shown). Nothing for a URL that does not parse.
 */
export function urlSecrets(url: string): string[] {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return []
  }
  const parts = [target.username, target.password, target.pathname.replace(/\/+$/, '')]
  parts.push(...target.pathname.split('/'))
  for (const pair of target.search.replace(/^\?/, '').split('&')) {
    const equals = pair.indexOf('=')
    // Each name and value, a value with an `=` in it (base64 padding) also whole.
    const pieces = [...pair.split('='), ...(equals < 0 ? [] : [pair.slice(equals + 1)])]
    for (const piece of pieces) parts.push(piece, decoded(piece.replaceAll('+', ' ')))
  }
  const basic = basicCredentials(target)
  const secrets = new Set<string>()
  for (const part of parts)
    for (const form of [part, decoded(part), encodeURIComponent(decoded(part))])
      if (form.length >= MIN_SECRET) secrets.add(form)
  // As the header carries it, and without its padding (a proxy's log may drop it).
  if (basic)
    for (const form of [basic, basic.replace(/=+$/, '')]) if (form.length >= MIN_SECRET) secrets.add(form)
  return [...secrets]
}

/**
 * The credentials of a URL with a user name or password as HTTP Basic authorization sends them:
 * base64 of `user:password` (decoded, UTF-8); undefined for a URL without them.
 */
function basicCredentials(target: URL): string | undefined {
  if (!target.username && !target.password) return undefined
  const credentials = `${decoded(target.username)}:${decoded(target.password)}`
  return btoa(String.fromCharCode(...new TextEncoder().encode(credentials)))
}

/** `text` percent-decoded; as it is where it is not well-formed. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** What a secret part of the node's URL is replaced with in the node's text. */
const REDACTED_PART = '<redacted>'

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * A node's JSON-RPC error message (or any text of the node's own) as the service passes it on:
 * anything that looks like a URL (a node or proxy may quote its own, credentials and all, with its
 * `://` also JSON-escaped or URL-encoded) replaced by `<url>`, then every other occurrence of
 * `secrets` (`urlSecrets` of the node's URL, in any case, and with its `/` written `\/` as in JSON)
 * by `<redacted>`, and bounded in length.
 */
export function redactNodeMessage(message: string, secrets: readonly string[] = []): string {
  let redacted = message
    .replace(/[a-z][a-z0-9+.-]*(?::\/\/|:\\\/\\\/|%3A%2F%2F)[^\s"'<>]*/gi, '<url>')
    .replace(/[^\s/:@"'<>]+:[^\s/@"'<>]+@[^\s"'<>]+/g, '<url>')
  const forms = new Set<string>()
  for (const secret of secrets) {
    forms.add(secret)
    forms.add(secret.replaceAll('/', '\\/'))
  }
  if (forms.size > 0) {
    // Longest first, so that the whole path goes before one of its segments.
    const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp)
    redacted = redacted.replace(new RegExp(alternatives.join('|'), 'gi'), REDACTED_PART)
  }
  // Bounded last: a secret cut in two by the bound would no longer be found.
  redacted = redacted.replace(/\s+/g, ' ').trim()
  return redacted.length > MAX_NODE_MESSAGE ? `${redacted.slice(0, MAX_NODE_MESSAGE)}…` : redacted
}

/**
 * Text of the node's own from an answer (a simulation's logs, a transaction's error) as it may be
 * passed on: through the node's `redact` (which knows its URL), else `redactNodeMessage`.
 */
export const nodeText = (rpc: SendRpc, text: string): string =>
  rpc.redact ? rpc.redact(text) : redactNodeMessage(text)

/** Why a call did not reach the node, in words that quote nothing of the node's own. */
function unreachable(method: string, error: unknown): RpcUnreachableError {
  const name = (error as { name?: string })?.name
  const code = (error as { cause?: { code?: unknown } })?.cause?.code
  const why =
    name === 'TimeoutError' || name === 'AbortError'
      ? 'did not answer in time'
      : typeof code === 'string' && /^E[A-Z_]+$/.test(code)
        ? `could not be reached (${code})`
        : 'could not be reached'
  return new RpcUnreachableError(`${method}: the node ${why}`)
}

/**
 * A JSON-RPC caller that tells an unreachable node (`RpcUnreachableError`: retry later) from a
 * refusal (`RpcRefusedError`, with the revert data when the node gives it). Credentials in the URL
 * (`https://user:password@host/…`) are sent as HTTP Basic authorization (fetch refuses URLs that
 * carry them); no error this raises quotes the URL or a part of it that may be a key (`urlSecrets`:
 * a refusal's message goes through `redact`), or the text of a connection failure or of a body
 * that is not JSON-RPC.
 */
export function sendRpc(url: string, fetch: typeof globalThis.fetch, timeoutMs: number): SendRpc {
  const target = new URL(url)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  const basic = basicCredentials(target)
  if (basic) {
    headers.authorization = `Basic ${basic}`
    target.username = ''
    target.password = ''
  }
  const endpoint = target.toString()
  const secrets = urlSecrets(url)
  const redact = (text: string) => redactNodeMessage(text, secrets)
  let id = 0
  const call = async (method: string, params: unknown[]): Promise<unknown> => {
    let response: Response
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (error) {
      throw unreachable(method, error)
    }
    let body: { result?: unknown; error?: { message?: string; data?: unknown } }
    try {
      body = (await response.json()) as typeof body
    } catch (error) {
      if ((error as { name?: string })?.name === 'TimeoutError') throw unreachable(method, error)
      throw new RpcUnreachableError(
        `${method}: the node answered HTTP ${response.status} without a JSON-RPC body`,
      )
    }
    if (body === null || typeof body !== 'object')
      throw new RpcUnreachableError(
        `${method}: the node answered HTTP ${response.status} without a JSON-RPC body`,
      )
    if (body.error) {
      const text = String(body.error.message ?? 'JSON-RPC error')
      throw new RpcRefusedError(
        redact(text),
        typeof body.error.data === 'string' && /^0x[0-9a-fA-F]*$/.test(body.error.data)
          ? body.error.data
          : undefined,
        text,
      )
    }
    if (!('result' in body))
      throw new RpcUnreachableError(
        `${method}: the node answered HTTP ${response.status} without a JSON-RPC result`,
      )
    return body.result
  }
  return Object.assign(call, { redact })
}

/**
 * What `prepare` answers when the node failed it: an ApiError as it is, a node's refusal as
 * `TRANSACTION_INVALID` on `field`, an unreachable node (a timeout, a closed connection, an answer
 * that is not JSON-RPC) as `RPC_FAILED`, and anything else (an answer of the wrong shape) as
 * `RPC_FAILED` too, in the service's own words: no URL, credential or upstream text.
 */
export function nodeFailure(error: unknown, caip2: string, field: string): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof RpcRefusedError)
    return new FieldError({
      code: 'TRANSACTION_INVALID',
      field,
      message: `the ${caip2} node refused the transaction: ${error.message}`,
    })
  if (error instanceof RpcUnreachableError)
    return new UnavailableError({
      code: 'RPC_FAILED',
      message: `the ${caip2} node did not answer: ${error.message}`,
    })
  return new UnavailableError({ code: 'RPC_FAILED', message: `the ${caip2} node's answer could not be read` })
}
