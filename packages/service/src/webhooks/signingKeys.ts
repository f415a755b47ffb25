import { type WebhookJwk, webhookJwk, webhookSignedInput } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import type { Runtime } from '../kernel/Runtime.ts'
import type { PluginRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Store.ts'

/** `pluginRows.kind` of the webhook signing keys (one row per key, its id the key id). */
export const SIGNING_KEY_KIND = 'webhooks.signingKey'

/** How long a retired key stays at the JWKS endpoint by default: longer than any receiver's timestamp window. */
export const RETIRED_KEY_PUBLISHED_MS = 24 * 60 * 60_000

interface SigningKeyData {
  /** The Ed25519 public key, hex. */
  publicKey: string
  /** The 32-byte seed, sealed under the master key. */
  sealedPrivateKey: string
  /** Set when a newer key took over. */
  retiredAt?: number
  /** Until when it stays published once retired (ms since the epoch). @default retiredAt + RETIRED_KEY_PUBLISHED_MS */
  publishedUntil?: number
}

/** What making a key needs: a clock, ids and the master key (a runtime, or the CLI's own). */
export type KeyMaker = Pick<Runtime, 'now' | 'newId' | 'seal'>

const dataOf = (row: PluginRow) => row.data as unknown as SigningKeyData

/** A new signing key (sealed) in `tx`, retiring the current one(s), published `overlapMs` longer. */
async function addKey(
  runtime: KeyMaker,
  tx: Transaction,
  overlapMs = RETIRED_KEY_PUBLISHED_MS,
): Promise<PluginRow> {
  const now = runtime.now()
  for (const row of await tx.findBy('pluginRows', 'kind', SIGNING_KEY_KIND))
    if (!dataOf(row).retiredAt)
      await tx.put('pluginRows', {
        ...row,
        data: { ...row.data, retiredAt: now, publishedUntil: now + overlapMs },
        updatedAt: now,
      })
  const seed = ed25519.utils.randomSecretKey()
  const row: PluginRow = {
    id: `whk_${runtime.newId()}`,
    kind: SIGNING_KEY_KIND,
    data: {
      publicKey: bytesToHex(ed25519.getPublicKey(seed)),
      sealedPrivateKey: runtime.seal(bytesToHex(seed)),
    } satisfies SigningKeyData as unknown as Record<string, unknown>,
    createdAt: now,
    updatedAt: now,
  }
  await tx.put('pluginRows', row)
  return row
}

/** At every start: makes the first signing key if there is none (idempotent, any instance). */
export async function ensureSigningKey(runtime: Runtime, tx: Transaction): Promise<void> {
  const rows = await tx.findBy('pluginRows', 'kind', SIGNING_KEY_KIND)
  if (!rows.some((row) => !dataOf(row).retiredAt)) await addKey(runtime, tx)
}

/**
 * Makes a new signing key and retires the current one, which stays at the JWKS endpoint for
 * `overlapMs` (a day by default: deliveries signed with it just before, and receivers that cached
 * the JWKS, still verify). Every instance signs with the new key from its next try on (the key is
 * read per try). `latchkey-service webhooks rotate-key` runs it against a data dir or PostgreSQL.
 */
export async function rotateSigningKey(
  runtime: KeyMaker & { store: Pick<Runtime['store'], 'transaction'> },
  options: { overlapMs?: number } = {},
): Promise<string> {
  return runtime.store.transaction(async (tx) => (await addKey(runtime, tx, options.overlapMs)).id)
}

/** The keys the JWKS endpoint publishes: the current one and the retired ones still in their overlap. */
export async function publishedKeys(runtime: Runtime): Promise<WebhookJwk[]> {
  const now = runtime.now()
  return (await runtime.store.findBy('pluginRows', 'kind', SIGNING_KEY_KIND))
    .filter((row) => {
      const { retiredAt, publishedUntil } = dataOf(row)
      return retiredAt === undefined || now < (publishedUntil ?? retiredAt + RETIRED_KEY_PUBLISHED_MS)
    })
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((row) => webhookJwk(row.id, hexToBytes(dataOf(row).publicKey)))
}

/**
 * Each runtime's signing keys as non-extractable WebCrypto keys (the platform's native Ed25519,
 * several times cheaper than signing in JavaScript), by key id and the sealed seed they were
 * opened from: a key is unsealed once, not on every try.
 */
const opened = new WeakMap<Runtime, Map<string, { sealed: string; key: Promise<CryptoKey> }>>()

function cryptoKeyOf(runtime: Runtime, row: PluginRow): Promise<CryptoKey> {
  const { sealedPrivateKey, publicKey } = dataOf(row)
  const keys = opened.get(runtime) ?? new Map<string, { sealed: string; key: Promise<CryptoKey> }>()
  opened.set(runtime, keys)
  const known = keys.get(row.id)
  if (known?.sealed === sealedPrivateKey) return known.key
  const seed = hexToBytes(runtime.openText(sealedPrivateKey))
  const key = crypto.subtle.importKey(
    'jwk',
    {
      kty: 'OKP',
      crv: 'Ed25519',
      d: base64urlnopad.encode(seed),
      x: base64urlnopad.encode(hexToBytes(publicKey)),
    },
    { name: 'Ed25519' },
    false,
    ['sign'],
  )
  seed.fill(0)
  // A key that failed to open is opened again on the next try.
  key.catch(() => keys.delete(row.id))
  keys.set(row.id, { sealed: sealedPrivateKey, key })
  return key
}

/** Signs one try of a delivery with the current key: the signature headers' values. */
export async function signDelivery(
  runtime: Runtime,
  input: { eventId: string; timestampMs: string; body: Uint8Array },
): Promise<{ keyId: string; signature: string }> {
  const rows = (await runtime.store.findBy('pluginRows', 'kind', SIGNING_KEY_KIND)).filter(
    (row) => !dataOf(row).retiredAt,
  )
  const current = rows.sort((a, b) => b.createdAt - a.createdAt)[0]
  if (!current) throw new Error('no webhook signing key')
  const signed = webhookSignedInput({ keyId: current.id, ...input })
  const signature = await crypto.subtle.sign(
    { name: 'Ed25519' },
    await cryptoKeyOf(runtime, current),
    signed as Uint8Array<ArrayBuffer>,
  )
  return { keyId: current.id, signature: bytesToHex(new Uint8Array(signature)) }
}
