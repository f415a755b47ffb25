import { ServiceError } from '../kernel/base/errors.ts'
import { masterKeyCheck, type SealingKey } from '../kernel/crypto/sealer.ts'
import type { KeyringRow, MasterKeyVersion } from '../kernel/store/model.ts'

/** The keyring's one row. */
export const KEYRING_ID = 'keyring'

/** A key that is none of the database's: the data was sealed under another key. */
export const FOREIGN_KEY_MESSAGE =
  'the master key does not open the secrets in this database (they were sealed under another key); nothing was changed. Start with the master key this data was created with'

/** The master keys given to a process do not fit the database's keyring; nothing was written. */
export class MasterKeyMismatchError extends ServiceError {
  override name = 'MasterKeyMismatchError'
}

/** What a process holds once its keys are matched to the keyring's versions. */
export interface KeyringPlan {
  /** The keys given, each with its version (retired keys left out). */
  keys: SealingKey[]
  /** The version new secrets are sealed under. */
  activeVersion: number
  /** The keyring to store (a first one, or one with a newly registered version); none when unchanged. */
  write?: KeyringRow
}

/**
 * Matches the master keys a process was given (the key in use first, then a new one a rotation
 * will move to) with the versions the database's keyring records, by each key's check value.
 *
 * Without a keyring (a new database, or one from before key versions) the first key is version 1.
 * A key the keyring does not know is registered as the next version, to become active when
 * `rotate-master-key` runs; only one such pending version may exist. A process must hold the
 * active version and every older one not yet retired (a rotation under way may leave values under
 * them); a retired key alone is refused with what to do.
 */
export function planKeyring(
  row: KeyringRow | undefined,
  given: readonly Uint8Array[],
  now: number,
): KeyringPlan {
  if (given.length === 0) throw new MasterKeyMismatchError('no master key given')
  const checks = given.map(masterKeyCheck)
  if (new Set(checks).size !== checks.length)
    throw new MasterKeyMismatchError('the same master key was given twice')
  const current: KeyringRow = row ?? {
    id: KEYRING_ID,
    keys: [{ version: 1, check: checks[0]! }],
    activeVersion: 1,
    createdAt: now,
    updatedAt: now,
  }
  let keysOfRow: MasterKeyVersion[] = current.keys
  let changed = row === undefined
  const keys: SealingKey[] = []
  for (const [index, check] of checks.entries()) {
    const known = keysOfRow.find((entry) => entry.check === check)
    if (known?.retiredAt !== undefined) continue
    if (known) {
      keys.push({ version: known.version, key: given[index]! })
      continue
    }
    const newest = Math.max(...keysOfRow.map((entry) => entry.version))
    if (newest > current.activeVersion)
      throw new MasterKeyMismatchError(
        `master key version ${newest} is registered for a rotation that has not run yet, and a master key given is not it; nothing was changed. Give the key in use and the new key that was registered`,
      )
    keysOfRow = [...keysOfRow, { version: newest + 1, check }]
    changed = true
    keys.push({ version: newest + 1, key: given[index]! })
  }
  const held = new Set(keys.map((entry) => entry.version))
  const needed = keysOfRow.filter(
    (entry) => entry.retiredAt === undefined && entry.version <= current.activeVersion,
  )
  const missing = needed.filter((entry) => !held.has(entry.version))
  if (missing.length > 0) {
    const retired = checks.some(
      (check) => keysOfRow.find((entry) => entry.check === check)?.retiredAt !== undefined,
    )
    const rotation = current.rotation
      ? ` A rotation to version ${current.rotation.to} is under way: give both the key in use and the new one until it finishes.`
      : ''
    const foreign = checks.every((check) => !current.keys.some((entry) => entry.check === check))
    throw new MasterKeyMismatchError(
      foreign
        ? FOREIGN_KEY_MESSAGE
        : retired
          ? `the master key given was retired by a rotation (the secrets are sealed under master key version ${current.activeVersion} now); nothing was changed. Start with the new key.`
          : `the master key given does not open the secrets in this database: they need master key version${missing.length > 1 ? 's' : ''} ${missing.map((entry) => entry.version).join(', ')}; nothing was changed.${rotation}`,
    )
  }
  return {
    keys: keys.sort((a, b) => a.version - b.version),
    activeVersion: current.activeVersion,
    ...(changed ? { write: { ...current, keys: keysOfRow, updatedAt: now } } : {}),
  }
}
