import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { FieldError } from '../kernel/base/errors.ts'
import type { PipelineEnv } from '../kernel/requestEnv.ts'

/** Deepest nesting of arrays and objects a request body may have (real bodies stay under 10). */
export const MAX_JSON_DEPTH = 32

// The route families' `Env` is the kernel's (`kernel/requestEnv.ts`); named here too for the wings' sub-apps.
export type { PipelineEnv } from '../kernel/requestEnv.ts'

const tooLarge = (limit: number) =>
  new FieldError({
    code: 'PAYLOAD_TOO_LARGE',
    message: `request body exceeds ${limit} bytes`,
    extra: { limit },
  })

/**
 * One body limit per route family, by the longest matching path prefix: a declared
 * `Content-Length` over it is refused before any byte is read. On the families in `readByUs`
 * (whose handlers read the body with `readBytes`, which cuts a body off at the limit while it
 * streams) nothing more happens here; elsewhere hono's `bodyLimit` reads the body to cut it off.
 */
export function bodyLimits(
  limits: Record<string, number>,
  fallback: number,
  readByUs: string[] = [],
): MiddlewareHandler<PipelineEnv> {
  const prefixes = Object.keys(limits).sort((a, b) => b.length - a.length)
  const middlewares = new Map<number, MiddlewareHandler>()
  const middlewareFor = (limit: number) => {
    let middleware = middlewares.get(limit)
    if (!middleware) {
      middleware = bodyLimit({
        maxSize: limit,
        onError: () => {
          throw tooLarge(limit)
        },
      })
      middlewares.set(limit, middleware)
    }
    return middleware
  }
  return async (c, next) => {
    const path = c.req.path
    const prefix = prefixes.find((p) => path.startsWith(p))
    const limit = prefix === undefined ? fallback : limits[prefix]!
    c.set('bodyLimit', limit)
    if (!readByUs.some((p) => path.startsWith(p))) return middlewareFor(limit)(c, next)
    if (Number(c.req.header('content-length') ?? '0') > limit) throw tooLarge(limit)
    return next()
  }
}

/** A Node request stream (`@hono/node-server` passes it as `c.env.incoming`). */
interface NodeIncoming {
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown
  on(event: 'end', listener: () => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: string, listener: (...args: never[]) => void): unknown
  readableEnded: boolean
}

const isNodeIncoming = (value: unknown): value is NodeIncoming =>
  typeof (value as NodeIncoming | undefined)?.on === 'function' &&
  typeof (value as NodeIncoming).readableEnded === 'boolean'

const concat = (chunks: Uint8Array[], size: number) => {
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return bytes
}

/** Reads a Node request stream straight, without a web stream in between (most of a request's cost). */
function readIncoming(incoming: NodeIncoming, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = []
    let size = 0
    const stop = () => {
      incoming.off('data', onData)
      incoming.off('end', onEnd)
      incoming.off('error', onError)
    }
    const onData = (chunk: Uint8Array) => {
      size += chunk.length
      if (size > limit) {
        // The rest is drained (or the connection closed) by the server once the 413 is sent.
        stop()
        reject(tooLarge(limit))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      stop()
      resolve(concat(chunks, size))
    }
    const onError = (error: Error) => {
      stop()
      reject(error)
    }
    incoming.on('data', onData)
    incoming.on('end', onEnd)
    incoming.on('error', onError)
  })
}

/**
 * Reads a request body, never more than `limit` bytes (a lying or missing length included): from
 * the Node request stream `incoming` when the server passed one, else from the web `Request`.
 */
export async function readBytes(request: Request, limit: number, incoming?: unknown): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? '0')
  if (declared > limit) throw tooLarge(limit)
  if (isNodeIncoming(incoming) && !incoming.readableEnded) return readIncoming(incoming, limit)
  const reader = request.body?.getReader()
  if (!reader) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  return concat(chunks, size)
}

const kindOf = (value: unknown) => (Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value)

/**
 * Parses UTF-8 JSON that must be an object, no deeper than `maxDepth`; a 400 naming the problem
 * (and, for nesting, the field where it goes too deep) otherwise. Stamps are checked against the
 * same bytes, so callers keep them.
 */
export function parseJsonObject(bytes: Uint8Array, maxDepth = MAX_JSON_DEPTH): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    throw new FieldError({
      code: 'BODY_INVALID',
      message: `request body is not valid JSON: ${(error as Error).message}`,
    })
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new FieldError({
      code: 'BODY_INVALID',
      message: `request body must be a JSON object, got ${kindOf(value)}`,
    })
  assertDepth(value, maxDepth)
  return value as Record<string, unknown>
}

/**
 * Walks the value without recursion (so no depth can overflow the stack), naming no field: a body
 * within the limit, every body but an attacker's, costs no string per value (issue 42).
 */
function assertDepth(root: object, maxDepth: number): void {
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!
    if (typeof value !== 'object' || value === null) continue
    if (depth > maxDepth) {
      nameTooDeep(root, maxDepth)
      return
    }
    for (const item of Array.isArray(value) ? value : Object.values(value)) stack.push([item, depth + 1])
  }
}

/** The same walk, naming the first field found nested too deep (`assertDepth` found one). */
function nameTooDeep(root: object, maxDepth: number): void {
  const stack: [unknown, string, number][] = [[root, '', 1]]
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!
    if (typeof value !== 'object' || value === null) continue
    if (depth > maxDepth)
      throw new FieldError({ field: path, reason: `nests deeper than ${maxDepth} levels` })
    if (Array.isArray(value))
      for (const [index, item] of value.entries()) stack.push([item, `${path}[${index}]`, depth + 1])
    else
      for (const [key, item] of Object.entries(value))
        stack.push([item, path ? `${path}.${key}` : key, depth + 1])
  }
}

/** The body of the request in `c` as raw bytes and a JSON object, within the route family's limit. */
export async function readJson(
  // biome-ignore lint/suspicious/noExplicitAny: any route family's context (their Env types extend PipelineEnv)
  c: Context<any>,
): Promise<{ bytes: Uint8Array; json: Record<string, unknown> }> {
  const bytes = await readBytes(
    c.req.raw,
    (c.get('bodyLimit') as number | undefined) ?? 64 * 1024,
    (c.env as { incoming?: unknown } | undefined)?.incoming,
  )
  return { bytes, json: parseJsonObject(bytes) }
}
