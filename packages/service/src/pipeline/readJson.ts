import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { ApiError } from '../errors.ts'

/** Deepest nesting of arrays and objects a request body may have (real bodies stay under 10). */
export const MAX_JSON_DEPTH = 32

/** What the body-limit middleware leaves for the JSON reader. */
export type PipelineEnv = { Variables: { bodyLimit: number } }

const tooLarge = (limit: number) =>
  new ApiError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`, undefined, { limit })

/**
 * One body limit per route family, by the longest matching path prefix: a declared
 * `Content-Length` over it is refused before any byte is read, and a body without one is cut off
 * while it streams (hono's `bodyLimit`). The JSON reader enforces the same number again.
 */
export function bodyLimits(limits: Record<string, number>, fallback: number): MiddlewareHandler<PipelineEnv> {
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
    const prefix = prefixes.find((p) => c.req.path.startsWith(p))
    const limit = prefix === undefined ? fallback : limits[prefix]!
    c.set('bodyLimit', limit)
    return middlewareFor(limit)(c, next)
  }
}

/** Reads a request body, never more than `limit` bytes (a lying or missing length included). */
export async function readBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? '0')
  if (declared > limit) throw tooLarge(limit)
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
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return bytes
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
    throw new ApiError('BODY_INVALID', `request body is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ApiError('BODY_INVALID', `request body must be a JSON object, got ${kindOf(value)}`)
  assertDepth(value, maxDepth)
  return value as Record<string, unknown>
}

/** Walks the value without recursion (so no depth can overflow the stack). */
function assertDepth(root: object, maxDepth: number): void {
  const stack: [unknown, string, number][] = [[root, '', 1]]
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!
    if (typeof value !== 'object' || value === null) continue
    if (depth > maxDepth)
      throw new ApiError('FIELD_INVALID', `${path} nests deeper than ${maxDepth} levels`, path)
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
  const bytes = await readBytes(c.req.raw, (c.get('bodyLimit') as number | undefined) ?? 64 * 1024)
  return { bytes, json: parseJsonObject(bytes) }
}
