import { KEYRING_ID } from '../assembly/keyring.ts'
import { CryptoInputError } from '../kernel/crypto/errors.ts'
import { type Sealer, sealedVersion } from '../kernel/crypto/sealer.ts'
import type { KeyringRow, TableName } from '../kernel/store/model.ts'
import { INDEXES } from '../kernel/store/model.ts'
import type { Store } from '../kernel/store/Store.ts'

export interface RotateSecretsOptions {
  /** The version every secret is re-sealed under (registered in the keyring, held by `sealer`). */
  to: number
  /** Rows read per step; each step re-seals in one short transaction. @default 100 */
  batchSize?: number
  /**
   * How long after activation the last walk starts, so that every instance has read the new
   * active version (they read it every `KEYRING_REFRESH_MS`) and seals nothing more under the old.
   * @default 5000
   */
  settleMs?: number
  /** Source of time. @default Date.now */
  now?: () => number
  /** Told after every step (tests interrupt a rotation here). */
  onStep?: (state: Rotation) => void | Promise<void>
}

export interface RotationResult {
  /** Secrets re-sealed by this run (a resumed rotation counts from where it resumed). */
  resealed: number
  /** The versions retired: no secret is sealed under them any more. */
  retired: number[]
}

type Rotation = NonNullable<KeyringRow['rotation']>

/** Every table that holds rows with secrets in them: all but the keyring itself. */
const TABLES = (Object.keys(INDEXES) as TableName[]).filter(
  (table): table is Exclude<TableName, 'keyring'> => table !== 'keyring',
)

/**
 * Re-seals every sealed value in every table under master-key version `to`, while instances keep
 * serving: it makes `to` the active version (instances follow within a second), then walks each
 * table in id order, re-sealing a batch of rows per transaction (rows are read again inside it, so
 * a concurrent write is never lost) and recording where it is in the keyring, so an interrupted
 * rotation resumes where it stopped. Walks repeat until one, started after instances settled on
 * the new version, finds nothing left; then the other versions are retired.
 *
 * `sealer` holds the old versions and `to`. A value it cannot open under a version it holds is
 * left alone (a string shaped like a sealed value that is not one); a value under a version it
 * does not hold stops the rotation, naming the table and id.
 */
export async function rotateSecrets(
  store: Store,
  sealer: Sealer,
  options: RotateSecretsOptions,
): Promise<RotationResult> {
  const { to } = options
  const now = options.now ?? Date.now
  const batchSize = options.batchSize ?? 100
  const settleMs = options.settleMs ?? 5_000
  if (!sealer.versions.includes(to)) throw new Error(`the new master key (version ${to}) is not held`)
  const started = await store.transaction(async (tx): Promise<Rotation | undefined> => {
    const row = await tx.get('keyring', KEYRING_ID)
    if (!row?.keys.some((entry) => entry.version === to && entry.retiredAt === undefined))
      throw new Error(`master key version ${to} is not registered in the keyring`)
    if (row.rotation) {
      if (row.rotation.to !== to)
        throw new Error(
          `a rotation to master key version ${row.rotation.to} is under way; finish it (run rotate-master-key with that key) first`,
        )
      return row.rotation
    }
    if (
      row.activeVersion === to &&
      row.keys.every((entry) => entry.version === to || entry.retiredAt !== undefined)
    )
      return undefined
    const rotation: Rotation = {
      to,
      table: TABLES[0]!,
      afterId: '',
      resealed: 0,
      pass: 1,
      passResealed: 0,
      startedAt: now(),
    }
    await tx.put('keyring', { ...row, activeVersion: to, rotation, updatedAt: now() })
    return rotation
  })
  if (!started) return { resealed: 0, retired: [] }
  let state: Rotation = started
  let resealed = 0
  for (;;) {
    const current: Rotation = state
    const tableIndex = TABLES.indexOf(current.table as (typeof TABLES)[number])
    const table = TABLES[tableIndex]!
    const batch = await store.page(table, { afterId: state.afterId, limit: batchSize })
    const stale = batch.filter((row) => hasStale(row, to)).map((row) => row.id)
    const lastId = batch.at(-1)?.id
    const next: Rotation =
      lastId !== undefined
        ? { ...state, afterId: lastId }
        : tableIndex + 1 < TABLES.length
          ? { ...state, table: TABLES[tableIndex + 1]!, afterId: '' }
          : { ...state, table: TABLES[0]!, afterId: '', pass: state.pass + 1, passResealed: 0 }
    const walkEnded = lastId === undefined && tableIndex + 1 === TABLES.length
    if (walkEnded && state.pass > 1 && state.passResealed === 0) break
    if (walkEnded) {
      // The next walk starts once every instance has had time to follow the new active version.
      const wait = state.startedAt + settleMs - now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    }
    const count = await store.transaction(async (tx) => {
      let changed = 0
      for (const id of stale) {
        const row = await tx.get(table, id)
        if (!row) continue
        const { value, count } = reseal(row, sealer, to, `${table} ${id}`)
        if (count === 0) continue
        await tx.put(table, value as never)
        changed += count
      }
      const keyring = await tx.get('keyring', KEYRING_ID)
      if (!keyring?.rotation || keyring.rotation.to !== to)
        throw new Error('the rotation was changed by another process')
      const progress = {
        ...next,
        resealed: keyring.rotation.resealed + changed,
        passResealed: next.pass === current.pass ? current.passResealed + changed : 0,
      }
      await tx.put('keyring', { ...keyring, rotation: progress, updatedAt: now() })
      return { changed, progress }
    })
    resealed += count.changed
    state = count.progress
    await options.onStep?.(state)
  }
  const retired = await store.transaction(async (tx) => {
    const keyring = await tx.get('keyring', KEYRING_ID)
    if (!keyring) throw new Error('the keyring disappeared')
    const at = now()
    const retiring = keyring.keys.filter((entry) => entry.version !== to && entry.retiredAt === undefined)
    const { rotation: _done, ...rest } = keyring
    await tx.put('keyring', {
      ...rest,
      keys: keyring.keys.map((entry) =>
        entry.version === to || entry.retiredAt !== undefined ? entry : { ...entry, retiredAt: at },
      ),
      rotatedAt: at,
      updatedAt: at,
    })
    return retiring.map((entry) => entry.version)
  })
  return { resealed, retired }
}

/** Whether a stored row holds a value shaped as sealed under another version than `to`. */
function hasStale(value: unknown, to: number): boolean {
  if (typeof value === 'string') {
    const version = sealedVersion(value)
    return version !== undefined && version !== to
  }
  if (Array.isArray(value)) return value.some((item) => hasStale(item, to))
  if (value !== null && typeof value === 'object')
    return Object.values(value).some((item) => hasStale(item, to))
  return false
}

/** `value` with every sealed string under another version re-sealed under `to`, and how many. */
function reseal(
  value: unknown,
  sealer: Sealer,
  to: number,
  where: string,
): { value: unknown; count: number } {
  if (typeof value === 'string') {
    const version = sealedVersion(value)
    if (version === undefined || version === to) return { value, count: 0 }
    if (!sealer.versions.includes(version))
      throw new Error(
        `${where} holds a secret sealed under master key version ${version}, which was not given`,
      )
    let opened: Uint8Array
    try {
      opened = sealer.open(value)
    } catch (error) {
      if (error instanceof CryptoInputError) return { value, count: 0 }
      throw error
    }
    try {
      return { value: sealer.seal(opened, to), count: 1 }
    } finally {
      opened.fill(0)
    }
  }
  if (Array.isArray(value)) {
    let count = 0
    const items = value.map((item) => {
      const result = reseal(item, sealer, to, where)
      count += result.count
      return result.value
    })
    return { value: count > 0 ? items : value, count }
  }
  if (value !== null && typeof value === 'object') {
    let count = 0
    const entries = Object.entries(value).map(([key, item]) => {
      const result = reseal(item, sealer, to, where)
      count += result.count
      return [key, result.value] as const
    })
    return { value: count > 0 ? Object.fromEntries(entries) : value, count }
  }
  return { value, count: 0 }
}
