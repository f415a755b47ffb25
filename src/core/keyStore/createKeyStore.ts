import { createStore, del, get, set, values } from 'idb-keyval'
import { KeyStoreUnavailableError } from '../baseErrors.ts'
import { compressPublicKey } from '../utils/compressPublicKey.ts'

/** A P-256 key pair whose private half never leaves WebCrypto. */
export interface StoredKey {
  /** Compressed public key, 66 lowercase hex chars; also the key's id in the store. */
  publicKey: string
  /** Non-extractable ECDSA P-256 private key. */
  privateKey: CryptoKey
  /** Epoch ms. */
  createdAt: number
  /** Which client made it (its parent organization id), so one client's cleanup spares another's keys. */
  scope?: string | undefined
}

export interface KeyStore {
  readonly kind: 'indexeddb' | 'memory'
  /** Generates a non-extractable P-256 key pair and stores it. */
  create(options?: { scope?: string | undefined }): Promise<StoredKey>
  get(publicKey: string): Promise<StoredKey | undefined>
  list(): Promise<StoredKey[]>
  delete(publicKey: string): Promise<void>
  /**
   * Deletes every key of `scope` (all keys when absent) not in `keep` and created before
   * `olderThan` (epoch ms); returns their public keys.
   */
  cleanup(keep: Iterable<string>, olderThan: number, scope?: string): Promise<string[]>
}

export type KeyStoreOption = 'indexeddb' | 'memory' | KeyStore

/** Generates a non-extractable WebCrypto P-256 signing key pair. */
export async function generateSigningKey(scope?: string): Promise<StoredKey> {
  if (!globalThis.crypto?.subtle) throw new KeyStoreUnavailableError('WebCrypto is missing')
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])
  // Public keys are always exportable, even when the pair is generated non-extractable.
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey))
  return { publicKey: compressPublicKey(raw), privateKey: pair.privateKey, createdAt: Date.now(), scope }
}

const sweep = async (store: KeyStore, keep: Iterable<string>, olderThan: number, scope?: string) => {
  const kept = new Set(keep)
  const removed: string[] = []
  for (const key of await store.list()) {
    if (kept.has(key.publicKey) || key.createdAt >= olderThan || (scope !== undefined && key.scope !== scope))
      continue
    await store.delete(key.publicKey)
    removed.push(key.publicKey)
  }
  return removed
}

/** Keys in this tab only; lost on reload. Use only where IndexedDB cannot work and the app opted in. */
export function createMemoryKeyStore(): KeyStore {
  const keys = new Map<string, StoredKey>()
  const store: KeyStore = {
    kind: 'memory',
    async create(options) {
      const key = await generateSigningKey(options?.scope)
      keys.set(key.publicKey, key)
      return key
    },
    get: async (publicKey) => keys.get(publicKey),
    list: async () => [...keys.values()],
    async delete(publicKey) {
      keys.delete(publicKey)
    },
    cleanup: (keep, olderThan, scope) => sweep(store, keep, olderThan, scope),
  }
  return store
}

/**
 * Keys in IndexedDB (database `latchkey`, object store `keys`, keyed by compressed public key
 * hex). Nothing is opened until the first call, so creating it is SSR-safe.
 */
export function createIndexedDbKeyStore(): KeyStore {
  let db: ReturnType<typeof createStore> | undefined
  const guard = async <T>(run: (db: ReturnType<typeof createStore>) => Promise<T>): Promise<T> => {
    if (typeof indexedDB === 'undefined')
      throw new KeyStoreUnavailableError('IndexedDB is not available here')
    try {
      db ??= createStore('latchkey', 'keys')
      return await run(db)
    } catch (error) {
      throw new KeyStoreUnavailableError('IndexedDB refused the operation', error)
    }
  }
  const store: KeyStore = {
    kind: 'indexeddb',
    async create(options) {
      const key = await generateSigningKey(options?.scope)
      await guard((db) => set(key.publicKey, key, db))
      return key
    },
    get: (publicKey) => guard((db) => get<StoredKey>(publicKey, db)),
    list: () => guard(async (db) => (await values<StoredKey>(db)).filter(Boolean)),
    delete: (publicKey) => guard((db) => del(publicKey, db)),
    cleanup: (keep, olderThan, scope) => sweep(store, keep, olderThan, scope),
  }
  return store
}

export function createKeyStore(option: KeyStoreOption = 'indexeddb'): KeyStore {
  if (typeof option === 'object') return option
  return option === 'memory' ? createMemoryKeyStore() : createIndexedDbKeyStore()
}
