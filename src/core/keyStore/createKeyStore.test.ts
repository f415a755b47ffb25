import { p256 } from '@noble/curves/nist.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it, vi } from 'vitest'
import { derToRaw, lowS, rawToDer, signP256 } from '../utils/ecdsa.ts'
import { createIndexedDbKeyStore, createKeyStore, createMemoryKeyStore } from './createKeyStore.ts'

describe('key store', () => {
  it('generates non-extractable P-256 keys kept in IndexedDB under their compressed public key', async () => {
    const store = createIndexedDbKeyStore()
    const key = await store.create()
    expect(key.publicKey).toMatch(/^0[23][0-9a-f]{64}$/)
    expect(key.privateKey.extractable).toBe(false)
    await expect(crypto.subtle.exportKey('pkcs8', key.privateKey)).rejects.toThrow()
    // A second store instance (another page load) sees the same key and can sign with it.
    const again = await createIndexedDbKeyStore().get(key.publicKey)
    expect(again?.publicKey).toBe(key.publicKey)
    const raw = await signP256(again!.privateKey, utf8ToBytes('body'))
    expect(p256.verify(raw, sha256(utf8ToBytes('body')), hexToBytes(key.publicKey), { prehash: false })).toBe(
      true,
    )
    await store.delete(key.publicKey)
    expect(await store.get(key.publicKey)).toBeUndefined()
  })

  it('cleans up keys no session uses, sparing recent ones', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const store = createMemoryKeyStore()
      const kept = await store.create()
      const stale = await store.create()
      vi.advanceTimersByTime(60_000)
      const fresh = await store.create()
      expect(await store.cleanup([kept.publicKey], Date.now() - 30_000)).toEqual([stale.publicKey])
      expect((await store.list()).map((k) => k.publicKey).sort()).toEqual(
        [kept.publicKey, fresh.publicKey].sort(),
      )
    } finally {
      vi.useRealTimers()
    }
  })

  it('memory store only when asked', () => {
    expect(createKeyStore().kind).toBe('indexeddb')
    expect(createKeyStore('memory').kind).toBe('memory')
  })
})

describe('ECDSA encodings', () => {
  it('round-trips raw r‖s and DER, and keeps s low', async () => {
    for (let i = 0; i < 20; i++) {
      const secret = p256.utils.randomSecretKey()
      const message = utf8ToBytes(`m${i}`)
      const raw = p256.sign(message, secret, { lowS: false })
      const der = rawToDer(raw)
      expect(der).toBe(p256.Signature.fromBytes(raw, 'compact').toHex('der'))
      expect(derToRaw(der)).toEqual(raw)
      const low = lowS(raw)
      expect(p256.verify(low, message, p256.getPublicKey(secret))).toBe(true)
    }
    expect(() => derToRaw('3000ff')).toThrow()
  })
})

describe('key store scopes', () => {
  it('cleanup of one client spares keys another client (another parent organization) made', async () => {
    const store = createMemoryKeyStore()
    const mine = await store.create({ scope: 'org-a' })
    const theirs = await store.create({ scope: 'org-b' })
    expect(await store.cleanup([], Date.now() + 1, 'org-a')).toEqual([mine.publicKey])
    expect((await store.list()).map((k) => k.publicKey)).toEqual([theirs.publicKey])
  })
})
