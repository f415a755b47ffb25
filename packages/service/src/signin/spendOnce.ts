import { ApiError } from '../kernel/base/errors.ts'
import type { Transaction } from '../kernel/store/Store.ts'

/** What a single-use token is: its kind names its marker rows. */
export type SpentKind =
  | 'verification-token'
  | 'verification-token-signup'
  | 'oidc-token'
  | 'oidc-token-link'
  | 'settings-request'

/** The error a second use of a token is refused with. */
export interface SpentError {
  errorCode: 'VERIFICATION_TOKEN_INVALID' | 'OIDC_TOKEN_REPLAYED' | 'ALREADY_EXISTS' | 'STAMP_INVALID'
  message: string
  field?: string
}

/**
 * Marks a single-use token (verification token id, OIDC `jti`) spent inside `tx`, so it counts
 * only if the login that spends it commits. Throws `errorCode` when it was spent before.
 */
export async function spendOnce(
  ctx: { tx: Transaction; now: number },
  kind: SpentKind,
  id: string,
  error: SpentError,
): Promise<void> {
  const rowId = `${kind}:${id}`
  if (await ctx.tx.get('pluginRows', rowId)) throw new ApiError(error.errorCode, error.message, error.field)
  await ctx.tx.put('pluginRows', { id: rowId, kind, data: {}, createdAt: ctx.now, updatedAt: ctx.now })
}
