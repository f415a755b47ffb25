import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { decryptExportBundle, encryptPrivateKeyToBundle, generateP256KeyPair } from '@turnkey/crypto'
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness, type Reply, resultOf } from '../testing/harness.ts'

const errorOf = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})

async function account(h: Harness) {
  const sub = await h.createSubOrganization()
  return { ...sub, as: { as: sub.keys[0]!, organizationId: sub.organizationId }, userId: sub.userIds[0]! }
}

const ETH_KEY = {
  privateKeyName: 'hot',
  curve: 'CURVE_SECP256K1',
  privateKeyTags: [],
  addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
}

describe('private keys', () => {
  it('creates (V2), lists, signs by id and by address, and exports a key the published client opens', async () => {
    const h = await createHarness()
    const a = await account(h)
    const created = await h.submit(
      'create_private_keys',
      {
        privateKeys: [
          ETH_KEY,
          { ...ETH_KEY, curve: 'CURVE_ED25519', addressFormats: ['ADDRESS_FORMAT_SOLANA'] },
        ],
      },
      a.as,
    )
    expect(created.body.activity.type).toBe('ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2')
    const [eth, sol] = created.body.activity.result.createPrivateKeysResultV2.privateKeys
    expect(eth.addresses[0]).toMatchObject({ format: 'ADDRESS_FORMAT_ETHEREUM' })
    expect(eth.addresses[0].address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(sol.addresses[0].format).toBe('ADDRESS_FORMAT_SOLANA')

    const listed = await h.query(
      'list_private_keys',
      { organizationId: a.organizationId },
      { as: a.keys[0]! },
    )
    expect(listed.body.privateKeys.map((k: { privateKeyId: string }) => k.privateKeyId).sort()).toEqual(
      [eth.privateKeyId, sol.privateKeyId].sort(),
    )
    expect(JSON.stringify(listed.body)).not.toMatch(/sealed/)
    const one = await h.query(
      'get_private_key',
      { organizationId: a.organizationId, privateKeyId: eth.privateKeyId },
      { as: a.keys[0]! },
    )
    expect(one.body.privateKey).toMatchObject({ privateKeyName: 'hot', exported: false, imported: false })

    const digest = bytesToHex(keccak_256(new TextEncoder().encode('hello')))
    for (const signWith of [eth.privateKeyId, eth.addresses[0].address]) {
      h.clock.advance(1000)
      const signed = resultOf(
        'sign_raw_payload',
        await h.submit(
          'sign_raw_payload',
          {
            signWith,
            payload: digest,
            encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
            hashFunction: 'HASH_FUNCTION_NO_OP',
          },
          a.as,
        ),
      )
      const signature = secp256k1.Signature.fromBytes(
        hexToBytes(signed.r + signed.s),
        'compact',
      ).addRecoveryBit(Number.parseInt(signed.v, 16))
      expect(bytesToHex(signature.recoverPublicKey(hexToBytes(digest)).toBytes(true))).toBe(
        one.body.privateKey.publicKey,
      )
    }

    const target = generateP256KeyPair()
    const exported = resultOf(
      'export_private_key',
      await h.submit(
        'export_private_key',
        { privateKeyId: eth.privateKeyId, targetPublicKey: target.publicKeyUncompressed },
        a.as,
      ),
    )
    expect(exported.privateKeyId).toBe(eth.privateKeyId)
    const opened = await decryptExportBundle({
      exportBundle: exported.exportBundle,
      embeddedKey: target.privateKey,
      organizationId: a.organizationId,
      dangerouslyOverrideSignerPublicKey: h.service.dev.signerPublicKey,
      keyFormat: 'HEXADECIMAL',
      returnMnemonic: false,
    })
    expect(bytesToHex(secp256k1.getPublicKey(hexToBytes(opened.replace(/^0x/, '')), true))).toBe(
      one.body.privateKey.publicKey,
    )
    const after = await h.query(
      'get_private_key',
      { organizationId: a.organizationId, privateKeyId: eth.privateKeyId },
      { as: a.keys[0]! },
    )
    expect(after.body.privateKey.exported).toBe(true)
  })

  it('imports a key encrypted by the published encryptPrivateKeyToBundle, once', async () => {
    const h = await createHarness()
    const a = await account(h)
    const { importBundle } = resultOf(
      'init_import_private_key',
      await h.submit('init_import_private_key', { userId: a.userId }, a.as),
    )
    const secret = secp256k1.utils.randomSecretKey()
    const encryptedBundle = await encryptPrivateKeyToBundle({
      privateKey: bytesToHex(secret),
      keyFormat: 'HEXADECIMAL',
      importBundle,
      userId: a.userId,
      organizationId: a.organizationId,
      dangerouslyOverrideSignerPublicKey: h.service.dev.signerPublicKey,
    })
    const params = {
      userId: a.userId,
      privateKeyName: 'imported',
      encryptedBundle,
      curve: 'CURVE_SECP256K1',
      addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
    }
    const reply = await h.submit('import_private_key', params, a.as)
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_IMPORT_PRIVATE_KEY')
    const { privateKeyId, addresses } = resultOf('import_private_key', reply)
    const publicKey = secp256k1.getPublicKey(secret, false)
    const expected = `0x${bytesToHex(keccak_256(publicKey.slice(1)).slice(-20))}`
    expect(addresses[0].address.toLowerCase()).toBe(expected)
    const stored = (await h.service.store.get('privateKeys', privateKeyId))!
    expect(stored.imported).toBe(true)
    expect(JSON.stringify(stored)).not.toContain(bytesToHex(secret))
    // The import target is spent: the same bundle again is refused.
    h.clock.advance(1000)
    expect(errorOf(await h.submit('import_private_key', params, a.as))).toEqual({
      status: 400,
      errorCode: 'BUNDLE_INVALID',
      field: 'parameters.encryptedBundle',
    })
  })

  it("another sub-organization can neither sign with, export, read nor import into this one's keys", async () => {
    const h = await createHarness()
    const a = await account(h)
    const b = await account(h)
    const created = resultOf(
      'create_private_keys',
      await h.submit('create_private_keys', { privateKeys: [ETH_KEY] }, a.as),
    )
    const key = created.privateKeys[0]
    const sign = await h.submit(
      'sign_raw_payload',
      {
        signWith: key.privateKeyId,
        payload: 'ab'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      b.as,
    )
    expect(errorOf(sign)).toEqual({
      status: 404,
      errorCode: 'WALLET_ACCOUNT_NOT_FOUND',
      field: 'parameters.signWith',
    })
    const target = generateP256KeyPair()
    expect(
      errorOf(
        await h.submit(
          'export_private_key',
          { privateKeyId: key.privateKeyId, targetPublicKey: target.publicKeyUncompressed },
          b.as,
        ),
      ),
    ).toEqual({ status: 404, errorCode: 'KEY_NOT_FOUND', field: 'parameters.privateKeyId' })
    const read = await h.query(
      'get_private_key',
      { organizationId: b.organizationId, privateKeyId: key.privateKeyId },
      { as: b.keys[0]! },
    )
    expect(errorOf(read)).toMatchObject({ status: 404, errorCode: 'KEY_NOT_FOUND' })
    expect(errorOf(await h.submit('init_import_private_key', { userId: a.userId }, b.as))).toEqual({
      status: 404,
      errorCode: 'USER_NOT_FOUND',
      field: 'parameters.userId',
    })
    expect(
      errorOf(
        await h.submit(
          'create_private_keys',
          { privateKeys: [{ ...ETH_KEY, addressFormats: ['ADDRESS_FORMAT_SOLANA'] }] },
          a.as,
        ),
      ),
    ).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.privateKeys[0].addressFormats[0]',
    })
    expect(
      errorOf(
        await h.submit('create_private_keys', { privateKeys: [{ ...ETH_KEY, curve: 'CURVE_P256' }] }, a.as),
      ),
    ).toEqual({ status: 400, errorCode: 'ENUM_INVALID', field: 'parameters.privateKeys[0].curve' })
  })
})
