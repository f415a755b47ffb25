// A bundle encrypted to the organization's long-lived import key opens once, into the account it
// was imported for: a parent root credential holding a copy of it (the person's activity record
// keeps none once the import has ended, but one written before did) cannot import it into an
// account of its own and export the person's mnemonic or key, not as it was sent, not re-spelt,
// not by racing the person's import.

import { hpkeOpen, hpkeSeal } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { english, generateMnemonic } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { openSignedBundle } from '../kernel/crypto/index.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  type Reply,
  resultOf,
  softPasskey,
} from '../testing/harness.ts'

const errorOf = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})

async function importKey(h: Harness): Promise<Uint8Array> {
  const { importBundle } = resultOf(
    'latchkey_init_user_import',
    await h.submit('latchkey_init_user_import', {}),
  )
  const data = openSignedBundle<{ targetPublic: string }>(
    importBundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  return hexToBytes(data.targetPublic)
}

const seal = (plaintext: Uint8Array, receiverPublicKey: Uint8Array) =>
  JSON.stringify(hpkeSeal({ plaintext, receiverPublicKey }))

/** The first `encryptedBundle` string anywhere in `value`. */
function findBundle(value: Json): string | undefined {
  if (value && typeof value === 'object') {
    if (typeof value.encryptedBundle === 'string') return value.encryptedBundle
    for (const child of Object.values(value)) {
      const found = findBundle(child)
      if (found) return found
    }
  }
  return undefined
}

async function openExport(h: Harness, bundle: string, clientKey: Uint8Array): Promise<string> {
  const data = openSignedBundle<{ encappedPublic: string; ciphertext: string }>(
    bundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  const plaintext = await hpkeOpen({
    ciphertext: data,
    receiverPublicKey: p256.getPublicKey(clientKey, false),
    dh: (sender) => p256.getSharedSecret(clientKey, sender, true).slice(1),
  })
  return new TextDecoder().decode(plaintext)
}

/** A line of the attacker's: a new external id, their own passkey, the person's bundle. */
const mallory = (externalId: string, encryptedBundle: string, passkey = softPasskey()) => ({
  externalId,
  passkeys: [{ credentialId: passkey.credentialId, cosePublicKey: passkey.cosePublicKey }],
  wallets: [{ walletName: 'loot', encryptedBundle, accounts: [ETHEREUM_ACCOUNT] }],
})

const subOrganizations = async (h: Harness) =>
  (await h.service.store.findBy('organizations', 'parentOrganizationId', h.organizationId)).length

describe('latchkey_import_user: a bundle opens once, for the person it was imported for', () => {
  it('a parent root copying a person’s bundle from the activity record cannot import it again, nor export the mnemonic', async () => {
    const h = await createHarness()
    const mnemonic = generateMnemonic(english)
    const line = {
      externalId: 'privy:victim',
      email: 'victim@example.com',
      wallets: [
        {
          walletName: 'Main',
          encryptedBundle: seal(utf8ToBytes(mnemonic), await importKey(h)),
          accounts: [ETHEREUM_ACCOUNT],
        },
      ],
    }
    const imported = await h.submit('latchkey_import_user', line)
    const victim = resultOf('latchkey_import_user', imported)

    // Control: the parent's root cannot export the person's wallet in the sub-organization.
    const clientKey = p256.utils.randomSecretKey()
    const targetPublicKey = bytesToHex(p256.getPublicKey(clientKey, false))
    h.clock.advance(1000)
    const direct = await h.submit(
      'export_wallet',
      { walletId: victim.walletIds[0], targetPublicKey },
      { organizationId: victim.subOrganizationId },
    )
    expect(direct.status).not.toBe(200)

    // Months later, with only the parent's root credential: the record no longer holds the
    // ciphertext (importRecordKeepsNoBundle.test.ts), but a copy may be had elsewhere (a record
    // written before records were cleared, the operator's file).
    h.clock.advance(30 * 86_400_000)
    const record = await h.query('get_activity', { activityId: imported.body.activity.id })
    const encryptedBundle = line.wallets[0]!.encryptedBundle
    expect(findBundle(record.body.activity.intent)).toBeUndefined()
    expect(JSON.stringify(record.body)).not.toContain(JSON.parse(encryptedBundle).ciphertext)

    const passkey = softPasskey()
    const replay = await h.submit('latchkey_import_user', mallory('mallory', encryptedBundle, passkey))
    expect(errorOf(replay)).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
      field: 'parameters.wallets[0].encryptedBundle',
    })
    expect(replay.body.message).toContain('"privy:victim"')
    // Had it gone through, this is how the mnemonic would have left: it did not.
    let stolen: string | undefined
    if (replay.status === 200) {
      const mine = resultOf('latchkey_import_user', replay)
      h.clock.advance(1000)
      const exported = await h.submit(
        'export_wallet',
        { walletId: mine.walletIds[0], targetPublicKey },
        { as: passkey, organizationId: mine.subOrganizationId },
      )
      stolen = await openExport(h, resultOf('export_wallet', exported).exportBundle, clientKey)
    }
    expect(stolen).toBeUndefined()

    // Re-spelt, it is the same bundle: JSON reformatted, hex upper-cased, the encapsulated key
    // compressed (each of which still opens with the import key).
    const parsed = JSON.parse(encryptedBundle) as { encappedPublic: string; ciphertext: string }
    const respelt = [
      JSON.stringify({ ciphertext: parsed.ciphertext, encappedPublic: parsed.encappedPublic }, null, 2),
      JSON.stringify({ encappedPublic: parsed.encappedPublic.toUpperCase(), ciphertext: parsed.ciphertext }),
      JSON.stringify({
        encappedPublic: p256.Point.fromHex(parsed.encappedPublic).toHex(true),
        ciphertext: parsed.ciphertext.toUpperCase(),
      }),
    ]
    for (const [i, bundle] of respelt.entries())
      expect(errorOf(await h.submit('latchkey_import_user', mallory(`mallory-${i}`, bundle)))).toEqual({
        status: 409,
        errorCode: 'ALREADY_EXISTS',
        field: 'parameters.wallets[0].encryptedBundle',
      })
    // Only the person's account exists; a rerun of their own line is still answered as skipped.
    expect(await subOrganizations(h)).toBe(1)
    h.clock.advance(1000)
    const rerun = await h.submit('latchkey_import_user', line)
    expect(resultOf('latchkey_import_user', rerun)).toMatchObject({
      skipped: true,
      subOrganizationId: victim.subOrganizationId,
    })
  })

  it('two imports of one bundle at once under different external ids: exactly one imports it', async () => {
    const h = await createHarness()
    const encryptedBundle = seal(utf8ToBytes(generateMnemonic(english)), await importKey(h))
    const replies = await Promise.all(
      ['person', 'mallory', 'mallory-2', 'mallory-3'].map((externalId) =>
        h.submit('latchkey_import_user', mallory(externalId, encryptedBundle)),
      ),
    )
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of replies.filter((r) => r.status !== 200))
      expect(errorOf(reply)).toEqual({
        status: 409,
        errorCode: 'ALREADY_EXISTS',
        field: 'parameters.wallets[0].encryptedBundle',
      })
    expect(await subOrganizations(h)).toBe(1)
    expect(await h.service.store.all('wallets')).toHaveLength(1)
  })

  it('a private key bundle opens once too; a bundle given twice in a line is refused', async () => {
    const h = await createHarness()
    const key = await importKey(h)
    const privateKey = {
      privateKeyName: 'hot',
      encryptedBundle: seal(secp256k1.utils.randomSecretKey(), key),
      curve: 'CURVE_SECP256K1',
      addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
    }
    resultOf(
      'latchkey_import_user',
      await h.submit('latchkey_import_user', { externalId: 'p', privateKeys: [privateKey] }),
    )
    const passkey = softPasskey()
    expect(
      errorOf(
        await h.submit('latchkey_import_user', {
          externalId: 'mallory',
          passkeys: [{ credentialId: passkey.credentialId, cosePublicKey: passkey.cosePublicKey }],
          privateKeys: [privateKey],
        }),
      ),
    ).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
      field: 'parameters.privateKeys[0].encryptedBundle',
    })

    const wallet = {
      walletName: 'W',
      encryptedBundle: seal(utf8ToBytes(generateMnemonic(english)), key),
      accounts: [ETHEREUM_ACCOUNT],
    }
    expect(
      errorOf(await h.submit('latchkey_import_user', { externalId: 'q', wallets: [wallet, wallet] })),
    ).toEqual({ status: 400, errorCode: 'BUNDLE_INVALID', field: 'parameters.wallets[1].encryptedBundle' })
    expect(await subOrganizations(h)).toBe(1)
  })

  it('a line refused spends nothing: corrected, it imports with the same bundle', async () => {
    const h = await createHarness()
    const key = await importKey(h)
    resultOf(
      'latchkey_import_user',
      await h.submit('latchkey_import_user', { externalId: 'a', email: 'ada@example.com' }),
    )
    const line = {
      externalId: 'b',
      email: 'ada@example.com',
      wallets: [
        {
          walletName: 'W',
          encryptedBundle: seal(utf8ToBytes(generateMnemonic(english)), key),
          accounts: [ETHEREUM_ACCOUNT],
        },
      ],
    }
    expect(errorOf(await h.submit('latchkey_import_user', line))).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
      field: 'parameters.email',
    })
    const corrected = await h.submit('latchkey_import_user', { ...line, email: 'bea@example.com' })
    expect(resultOf('latchkey_import_user', corrected)).toMatchObject({
      skipped: false,
      walletIds: [expect.any(String)],
    })
  })
})
