// Master-key rotation in process on a data dir: an interrupted rotation resumes where it stopped,
// every secret ends up sealed under the new version, wallets sign with only the new key, and the
// old key alone is refused as retired.
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { createService, WrongMasterKeyError } from '../../src/assembly/createService.ts'
import { KEYRING_ID, planKeyring } from '../../src/assembly/keyring.ts'
import { rotateSecrets } from '../../src/commands/rotateSecrets.ts'
import { createSealer, sealedVersion } from '../../src/kernel/crypto/sealer.ts'
import { openDataDir } from '../../src/kernel/store/durableStores.ts'
import type { Store } from '../../src/kernel/store/Store.ts'
import { createHarness, resultOf } from '../../src/testing/harness.ts'
import { ETHEREUM_ACCOUNT, SOLANA_ACCOUNT } from '../../src/testing/testKeys.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

/** Every string in the store's rows shaped as a sealed value, with its version. */
async function sealedValues(store: Store): Promise<number[]> {
  const versions: number[] = []
  JSON.stringify(await store.dump(), (_key, value: unknown) => {
    if (typeof value === 'string') {
      const version = sealedVersion(value)
      if (version !== undefined) versions.push(version)
    }
    return value
  })
  return versions
}

/** Starting on `dir` with `keys` is refused with `message` (the store, left open by the refusal, is closed). */
async function refusedStart(dir: string, keys: Uint8Array[], message: RegExp): Promise<void> {
  const store = await openDataDir(dir)
  try {
    const refusal = await createService({ store, masterKeys: keys }).then(
      () => undefined,
      (error: Error) => error,
    )
    expect(refusal).toBeInstanceOf(WrongMasterKeyError)
    expect(refusal?.message).toMatch(message)
  } finally {
    await store.close()
  }
}

const signWith = (address: string) => ({
  signWith: address,
  payload: '11'.repeat(32),
  encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
  hashFunction: 'HASH_FUNCTION_NO_OP',
})

describe('master-key rotation', { timeout: 120_000 }, () => {
  it('an interrupted rotation resumes; afterwards only the new key is needed and the old one is refused as retired', async () => {
    const dir = tempDir('rotate')
    dirs.push(dir)
    const oldKey = new Uint8Array(randomBytes(32))
    const newKey = new Uint8Array(randomBytes(32))
    const harness = await createHarness({ store: await openDataDir(dir), masterKey: oldKey })
    const addresses: string[] = []
    for (let i = 0; i < 6; i++) {
      const wallet = resultOf(
        'create_wallet',
        await harness.submit('create_wallet', {
          walletName: `w${i}`,
          accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT],
        }),
      )
      addresses.push(...wallet.addresses)
      harness.clock.advance(1)
    }
    const before = await sealedValues(harness.service.store)
    expect(before.length).toBeGreaterThan(12)
    expect(new Set(before)).toEqual(new Set([1]))
    await harness.service.close()

    const store = await openDataDir(dir)
    const plan = planKeyring(await store.get('keyring', KEYRING_ID), [oldKey, newKey], Date.now())
    expect(plan.keys.map((entry) => entry.version)).toEqual([1, 2])
    await store.transaction((tx) => tx.put('keyring', plan.write!))
    const sealer = createSealer(plan.keys)
    let steps = 0
    await expect(
      rotateSecrets(store, sealer, {
        to: 2,
        batchSize: 2,
        settleMs: 0,
        onStep: () => {
          if (++steps === 4) throw new Error('interrupted')
        },
      }),
    ).rejects.toThrow('interrupted')
    const halfway = await store.get('keyring', KEYRING_ID)
    expect(halfway).toMatchObject({ activeVersion: 2, rotation: { to: 2, pass: 1 } })
    const mixed = await sealedValues(store)
    expect(mixed).toContain(1)
    expect(mixed).toContain(2)

    const result = await rotateSecrets(store, sealer, { to: 2, batchSize: 2, settleMs: 0 })
    expect(result.retired).toEqual([1])
    expect(result.resealed).toBeGreaterThan(0)
    const after = await sealedValues(store)
    expect(after).toHaveLength(before.length)
    expect(new Set(after)).toEqual(new Set([2]))
    const done = await store.get('keyring', KEYRING_ID)
    expect(done?.rotation).toBeUndefined()
    expect(done?.keys.find((entry) => entry.version === 1)?.retiredAt).toBeGreaterThan(0)
    // Run again: nothing to do.
    expect(await rotateSecrets(store, sealer, { to: 2, settleMs: 0 })).toEqual({ resealed: 0, retired: [] })
    await store.close()

    await refusedStart(dir, [oldKey], /retired by a rotation/)

    const renewed = await createHarness({ store: await openDataDir(dir), masterKey: newKey })
    try {
      for (const address of addresses.filter((address) => address.startsWith('0x'))) {
        const signed = resultOf(
          'sign_raw_payload',
          await renewed.submit('sign_raw_payload', signWith(address)),
        )
        expect(signed.r).toMatch(/^[0-9a-f]{64}$/)
        renewed.clock.advance(1)
      }
      // New secrets are sealed under version 2.
      await renewed.submit('create_wallet', { walletName: 'after', accounts: [ETHEREUM_ACCOUNT] })
      expect(new Set(await sealedValues(renewed.service.store))).toEqual(new Set([2]))
    } finally {
      await renewed.service.close()
    }
  })

  it('an instance given the key in use and a new one registers the new one as the next version and keeps sealing under the active one', async () => {
    const oldKey = new Uint8Array(randomBytes(32))
    const newKey = new Uint8Array(randomBytes(32))
    const dir = tempDir('rotate-register')
    dirs.push(dir)
    await (await createService({ store: await openDataDir(dir), masterKey: oldKey })).close()
    const both = await createService({ store: await openDataDir(dir), masterKeys: [oldKey, newKey] })
    try {
      expect(both.runtime.masterKeyVersions).toEqual([1, 2])
      expect(both.runtime.sealVersion).toBe(1)
      expect(sealedVersion(both.runtime.seal('x'))).toBe(1)
      const keyring = await both.store.get('keyring', KEYRING_ID)
      expect(keyring?.keys.map((entry) => entry.version)).toEqual([1, 2])
      expect(JSON.stringify(keyring)).not.toContain(Buffer.from(newKey).toString('hex'))
    } finally {
      await both.close()
    }
    // A third key while version 2 waits for its rotation is refused.
    await refusedStart(
      dir,
      [oldKey, new Uint8Array(randomBytes(32))],
      /version 2 is registered for a rotation that has not run yet/,
    )
    // The new key alone cannot open what is still sealed under version 1.
    await refusedStart(dir, [newKey], /need master key version 1/)
  })
})
