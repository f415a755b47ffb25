import { FieldError, PermissionError } from '../kernel/base/errors.ts'
import { CryptoInputError, makeExportBundle, openImportCiphertext } from '../kernel/crypto/index.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import type { UserRow } from '../kernel/store/model.ts'
import { withField } from './params.ts'
import { findUser } from './users.ts'

/**
 * A secret (mnemonic or private key) HPKE-sealed to the client's `targetPublicKey` in an envelope
 * signed by the signer key; the signer key and `plaintext` are wiped afterwards.
 */
export function exportSecret(ctx: ActivityContext, plaintext: Uint8Array, targetPublicKey: string): string {
  const signerPrivateKey = ctx.runtime.signerPrivateKey()
  try {
    return withField('parameters', () =>
      makeExportBundle({ plaintext, targetPublicKey, organizationId: ctx.organization.id, signerPrivateKey }),
    )
  } finally {
    signerPrivateKey.fill(0)
    plaintext.fill(0)
  }
}

/**
 * The user an `init_import_*` or `import_*` activity names (`parameters.userId`), whose import
 * target it makes or spends: the caller itself, or any user of the organization when the caller is
 * one of its root users. Anyone else (a user a policy lets import) is refused before the user is
 * looked up (403): they would otherwise replace another user's pending target, or spend it with
 * a bundle of their own while that user's import waits for approval.
 */
export async function importingUser(ctx: ActivityContext, userId: string): Promise<UserRow> {
  const isRoot =
    ctx.caller.organizationId === ctx.organization.id &&
    ctx.organization.rootUserIds.includes(ctx.caller.userId)
  if (!isRoot && userId !== ctx.caller.userId)
    throw new PermissionError({
      field: 'parameters.userId',
      message: 'parameters.userId must be the caller: only root users import for another user',
    })
  return findUser(ctx.tx, ctx.organization.id, userId, 'parameters.userId')
}

/**
 * Opens `encryptedBundle` with the user's pending import target (from `initPath`) and spends the
 * target; the caller wipes the returned plaintext. A missing target or a bundle that does not open
 * is BUNDLE_INVALID naming `parameters.encryptedBundle`.
 */
export async function openImportedSecret(
  ctx: ActivityContext,
  user: UserRow,
  encryptedBundle: string,
  initPath: string,
): Promise<Uint8Array> {
  const field = 'parameters.encryptedBundle'
  const target = (await ctx.tx.findBy('importTargets', 'userId', user.id)).at(-1)
  if (!target)
    throw new FieldError({
      code: 'BUNDLE_INVALID',
      field,
      message: `no import in progress for user ${user.id}; call ${initPath} first`,
    })
  const targetPrivateKey = ctx.runtime.open(target.sealedTargetPrivateKey)
  try {
    const plaintext = await openImportCiphertext({ encryptedBundle, targetPrivateKey })
    await ctx.tx.delete('importTargets', target.id)
    return plaintext
  } catch (error) {
    throw new FieldError({
      code: 'BUNDLE_INVALID',
      field,
      message: error instanceof CryptoInputError ? error.message : 'encryptedBundle cannot be decrypted',
    })
  } finally {
    targetPrivateKey.fill(0)
  }
}
