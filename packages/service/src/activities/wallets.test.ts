import { hpkeOpen, hpkeSeal } from '@latchkey/protocol/hpke'
import { ed25519 } from '@noble/curves/ed25519.js'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { openSignedBundle } from '../kernel/crypto/index.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf, SOLANA_ACCOUNT } from '../testing/harness.ts'

describe('wallet activities', () => {
  it('creates a wallet, derives accounts and signs with them', async () => {
    const h = await createHarness()
    const reply = await h.submit('create_wallet', {
      walletName: 'Main',
      accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT],
    })
    expect(reply.status).toBe(200)
    const activity = reply.body.activity
    expect(activity).toMatchObject({
      organizationId: h.organizationId,
      status: 'ACTIVITY_STATUS_COMPLETED',
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      intent: { createWalletIntent: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT] } },
      votes: [],
      canApprove: false,
      canReject: false,
    })
    const { walletId, addresses } = activity.result.createWalletResult
    expect(addresses).toHaveLength(2)
    expect(addresses[0]).toMatch(/^0x[0-9a-fA-F]{40}$/)

    const payload = `0x${'ab'.repeat(32)}`
    const signed = resultOf(
      'sign_raw_payloads',
      await h.submit('sign_raw_payloads', {
        signWith: addresses[0],
        payloads: [payload],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    )
    const [{ r, s, v }] = signed.signatures
    const signature = secp256k1.Signature.fromBytes(hexToBytes(r + s), 'compact').addRecoveryBit(
      Number.parseInt(v, 16),
    )
    const publicKey = signature.recoverPublicKey(hexToBytes(payload.slice(2))).toBytes(false)
    const recovered = `0x${Buffer.from(keccak_256(publicKey.slice(1)).slice(12)).toString('hex')}`
    expect(recovered).toBe(addresses[0].toLowerCase())

    const wallets = await h.query('list_wallets')
    expect(wallets.status).toBe(200)
    expect(wallets.body.wallets).toEqual([
      expect.objectContaining({ walletId, walletName: 'Main', exported: false, imported: false }),
    ])
  })
})

const ABANDON =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'

async function openExport(bundle: string, signerPublicKey: string, clientPrivateKey: Uint8Array) {
  const data = openSignedBundle<{ encappedPublic: string; ciphertext: string; organizationId: string }>(
    bundle,
    hexToBytes(signerPublicKey),
  )
  const plaintext = await hpkeOpen({
    ciphertext: data,
    receiverPublicKey: p256.getPublicKey(clientPrivateKey, false),
    dh: (sender) => p256.getSharedSecret(clientPrivateKey, sender, true).slice(1),
  })
  return { data, plaintext }
}

describe('wallet validation', () => {
  it('names the field of a bad account spec, mnemonic length or missing name', async () => {
    const h = await createHarness()
    const cases: [unknown, string, string][] = [
      [
        { walletName: 'W', accounts: [{ ...SOLANA_ACCOUNT, path: "m/44'/501'/0'/0" }] },
        'parameters.accounts[0].path',
        'FIELD_INVALID',
      ],
      [
        { walletName: 'W', accounts: [{ ...ETHEREUM_ACCOUNT, curve: 'CURVE_P256' }] },
        'parameters.accounts[0].curve',
        'ENUM_INVALID',
      ],
      [
        { walletName: 'W', accounts: [{ ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_SOLANA' }] },
        'parameters.accounts[0].addressFormat',
        'FIELD_INVALID',
      ],
      [{ walletName: 'W', accounts: [], mnemonicLength: 13 }, 'parameters.mnemonicLength', 'FIELD_INVALID'],
      [{ accounts: [] }, 'parameters.walletName', 'FIELD_REQUIRED'],
      [{ walletName: 'W', accounts: 'all' }, 'parameters.accounts', 'FIELD_INVALID'],
      [
        { walletName: 'W', accounts: Array.from({ length: 101 }, () => ETHEREUM_ACCOUNT) },
        'parameters.accounts',
        'PAYLOAD_TOO_LARGE',
      ],
    ]
    for (const [parameters, field, errorCode] of cases) {
      const reply = await h.submit('create_wallet', parameters)
      expect({
        status: reply.status,
        field: reply.body.details?.field,
        errorCode: reply.body.details?.errorCode,
      }).toEqual({
        status: 400,
        field,
        errorCode,
      })
    }
    expect(await h.service.store.all('wallets')).toEqual([])
  })

  it('creates 24-word wallets and derives more accounts, with persist: false deriving only', async () => {
    const h = await createHarness()
    const { walletId } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Long', accounts: [], mnemonicLength: 24 }),
    )
    const sealed = (await h.service.store.get('wallets', walletId))!
    expect(sealed.mnemonicLength).toBe(24)
    expect(sealed.sealedMnemonic).not.toMatch(/ /)
    const second = { ...ETHEREUM_ACCOUNT, path: "m/44'/60'/1'/0/0" }
    const preview = resultOf(
      'create_wallet_accounts',
      await h.submit('create_wallet_accounts', { walletId, accounts: [second], persist: false }),
    )
    expect((await h.query('list_wallet_accounts', { walletId })).body.accounts).toEqual([])
    const made = resultOf(
      'create_wallet_accounts',
      await h.submit('create_wallet_accounts', { walletId, accounts: [second] }),
    )
    expect(made.addresses).toEqual(preview.addresses)
    const accounts = (await h.query('list_wallet_accounts', { walletId })).body.accounts
    expect(accounts).toEqual([
      expect.objectContaining({
        walletId,
        address: made.addresses[0],
        path: second.path,
        addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
      }),
    ])
    expect(accounts[0]).not.toHaveProperty('sealedPrivateKey')
    h.clock.advance(1) // identical bytes from the same key would be a replay
    const duplicate = await h.submit('create_wallet_accounts', { walletId, accounts: [second] })
    expect(duplicate).toMatchObject({
      status: 409,
      body: { details: { errorCode: 'ALREADY_EXISTS', field: 'parameters.accounts[0]' } },
    })
    const missing = await h.submit('create_wallet_accounts', { walletId: 'nope', accounts: [second] })
    expect(missing).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'WALLET_NOT_FOUND', field: 'parameters.walletId' } },
    })
    expect((await h.query('get_wallet', { walletId })).body.wallet).toMatchObject({
      walletId,
      walletName: 'Long',
    })
    expect((await h.query('get_wallet', { walletId: 'nope' })).status).toBe(404)
  })

  it('paginates wallet accounts by id', async () => {
    const h = await createHarness()
    const accounts = Array.from({ length: 12 }, (_, i) => ({
      ...ETHEREUM_ACCOUNT,
      path: `m/44'/60'/${i}'/0/0`,
    }))
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Many', accounts }),
    )
    const first = (await h.query('list_wallet_accounts', {})).body.accounts
    expect(first.map((a: { address: string }) => a.address)).toEqual(addresses.slice(0, 10))
    const next = (
      await h.query('list_wallet_accounts', {
        paginationOptions: { after: first.at(-1).walletAccountId, limit: '5' },
      })
    ).body.accounts
    expect(next.map((a: { address: string }) => a.address)).toEqual(addresses.slice(10))
    const before = (
      await h.query('list_wallet_accounts', {
        paginationOptions: { before: first[3].walletAccountId, limit: '2' },
      })
    ).body.accounts
    expect(before.map((a: { address: string }) => a.address)).toEqual(addresses.slice(1, 3))
    expect(
      (await h.query('list_wallet_accounts', { paginationOptions: { limit: '0' } })).body.details.field,
    ).toBe('paginationOptions.limit')
  })
})

describe('sign_raw_payloads', () => {
  it('signs ed25519 payloads that verify, and names bad payloads', async () => {
    const h = await createHarness()
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Sol', accounts: [SOLANA_ACCOUNT] }),
    )
    const message = 'hello solana'
    const payload = Buffer.from(message).toString('hex')
    const signed = resultOf(
      'sign_raw_payloads',
      await h.submit('sign_raw_payloads', {
        signWith: addresses[0],
        payloads: [payload],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      }),
    )
    const account = (await h.query('list_wallet_accounts', {})).body.accounts[0]
    const { r, s } = signed.signatures[0]
    expect(ed25519.verify(hexToBytes(r + s), hexToBytes(payload), hexToBytes(account.publicKey))).toBe(true)
    const eth = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Eth', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const bad = await h.submit('sign_raw_payloads', {
      signWith: eth.addresses[0],
      payloads: [`0x${'00'.repeat(32)}`, '0x1234'],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    })
    expect(bad).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'FIELD_INVALID', field: 'parameters.payloads[1]' } },
    })
    const unknown = await h.submit('sign_raw_payloads', {
      signWith: '0x0000000000000000000000000000000000000001',
      payloads: ['00'],
      encoding: 'PAYLOAD_ENCODING_TEXT_UTF8',
      hashFunction: 'HASH_FUNCTION_KECCAK256',
    })
    expect(unknown).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'WALLET_ACCOUNT_NOT_FOUND', field: 'parameters.signWith' } },
    })
    const enumBad = await h.submit('sign_raw_payloads', {
      signWith: eth.addresses[0],
      payloads: ['00'],
      encoding: 'PAYLOAD_ENCODING_BASE64',
      hashFunction: 'HASH_FUNCTION_KECCAK256',
    })
    expect(enumBad).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'ENUM_INVALID', field: 'parameters.encoding' } },
    })
    // A checksum-less (lowercase) address finds the same account.
    const lower = await h.submit('sign_raw_payloads', {
      signWith: eth.addresses[0].toLowerCase(),
      payloads: ['hello'],
      encoding: 'PAYLOAD_ENCODING_TEXT_UTF8',
      hashFunction: 'HASH_FUNCTION_KECCAK256',
    })
    expect(lower.status).toBe(200)
  })
})

describe('export, import and delete', () => {
  it('exports an account key and a mnemonic to the client key, marking the wallet exported', async () => {
    const h = await createHarness()
    const { walletId, addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'E', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const clientKey = p256.utils.randomSecretKey()
    const target = bytesToHex(p256.getPublicKey(clientKey, false))
    const refused = await h.submit('delete_wallets', { walletIds: [walletId] })
    expect(refused).toMatchObject({
      status: 412,
      body: { details: { errorCode: 'WALLET_NOT_EXPORTED', field: 'parameters.walletIds[0]' } },
    })

    const exported = resultOf(
      'export_wallet_account',
      await h.submit('export_wallet_account', { address: addresses[0], targetPublicKey: target }),
    )
    expect(exported.address).toBe(addresses[0])
    const { data, plaintext } = await openExport(
      exported.exportBundle,
      h.service.dev.signerPublicKey,
      clientKey,
    )
    expect(data.organizationId).toBe(h.organizationId)
    expect(plaintext).toHaveLength(32)
    const publicKey = secp256k1.getPublicKey(plaintext, false)
    expect(`0x${bytesToHex(keccak_256(publicKey.slice(1)).slice(12))}`).toBe(addresses[0].toLowerCase())

    const mnemonic = resultOf(
      'export_wallet',
      await h.submit('export_wallet', { walletId, targetPublicKey: target }),
    )
    const opened = await openExport(mnemonic.exportBundle, h.service.dev.signerPublicKey, clientKey)
    expect(new TextDecoder().decode(opened.plaintext).split(' ')).toHaveLength(12)
    expect((await h.query('get_wallet', { walletId })).body.wallet.exported).toBe(true)
    const badTarget = await h.submit('export_wallet', { walletId, targetPublicKey: '04abcd' })
    expect(badTarget).toMatchObject({
      status: 400,
      body: { details: { field: 'parameters.targetPublicKey' } },
    })

    h.clock.advance(1)
    expect(resultOf('delete_wallets', await h.submit('delete_wallets', { walletIds: [walletId] }))).toEqual({
      walletIds: [walletId],
    })
    expect((await h.query('list_wallet_accounts', {})).body.accounts).toEqual([])
  })

  it('deletes never-exported wallets only with deleteWithoutExport, atomically', async () => {
    const h = await createHarness()
    const a = resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'A', accounts: [] }))
    const reply = await h.submit('delete_wallets', {
      walletIds: [a.walletId, 'missing'],
      deleteWithoutExport: true,
    })
    expect(reply).toMatchObject({ status: 404, body: { details: { field: 'parameters.walletIds[1]' } } })
    expect(await h.service.store.get('wallets', a.walletId)).toBeDefined()
    expect(
      resultOf(
        'delete_wallets',
        await h.submit('delete_wallets', { walletIds: [a.walletId], deleteWithoutExport: true }),
      ).walletIds,
    ).toEqual([a.walletId])
  })

  it('imports a mnemonic encrypted to the init_import_wallet target', async () => {
    const h = await createHarness()
    const userId = h.service.dev.userId
    const { importBundle } = resultOf('init_import_wallet', await h.submit('init_import_wallet', { userId }))
    const data = openSignedBundle<{ organizationId: string; userId: string; targetPublic: string }>(
      importBundle,
      hexToBytes(h.service.dev.signerPublicKey),
    )
    expect(data).toMatchObject({ organizationId: h.organizationId, userId })
    const encrypted = hpkeSeal({
      plaintext: new TextEncoder().encode(ABANDON),
      receiverPublicKey: hexToBytes(data.targetPublic),
    })
    const imported = resultOf(
      'import_wallet',
      await h.submit('import_wallet', {
        userId,
        walletName: 'Imported',
        encryptedBundle: JSON.stringify(encrypted),
        accounts: [ETHEREUM_ACCOUNT],
      }),
    )
    expect(imported.addresses).toEqual(['0x9858EfFD232B4033E47d90003D41EC34EcaEda94'])
    expect((await h.query('get_wallet', { walletId: imported.walletId })).body.wallet).toMatchObject({
      imported: true,
      exported: false,
    })
    // The target is single-use.
    const replay = await h.submit('import_wallet', {
      userId,
      walletName: 'Again',
      encryptedBundle: JSON.stringify(encrypted),
      accounts: [],
    })
    expect(replay).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'BUNDLE_INVALID', field: 'parameters.encryptedBundle' } },
    })
  })

  it('refuses an import bundle that is not a mnemonic or not for the target', async () => {
    const h = await createHarness()
    const userId = h.service.dev.userId
    const { importBundle } = resultOf('init_import_wallet', await h.submit('init_import_wallet', { userId }))
    const { targetPublic } = openSignedBundle<{ targetPublic: string }>(
      importBundle,
      hexToBytes(h.service.dev.signerPublicKey),
    )
    const notMnemonic = hpkeSeal({
      plaintext: new TextEncoder().encode('hello world'),
      receiverPublicKey: hexToBytes(targetPublic),
    })
    const reply = await h.submit('import_wallet', {
      userId,
      walletName: 'x',
      encryptedBundle: JSON.stringify(notMnemonic),
      accounts: [],
    })
    expect(reply).toMatchObject({ status: 400, body: { details: { errorCode: 'BUNDLE_INVALID' } } })
    const otherKey = p256.getPublicKey(p256.utils.randomSecretKey(), false)
    const wrong = hpkeSeal({ plaintext: new TextEncoder().encode(ABANDON), receiverPublicKey: otherKey })
    const reply2 = await h.submit('import_wallet', {
      userId,
      walletName: 'x',
      encryptedBundle: JSON.stringify(wrong),
      accounts: [],
    })
    expect(reply2).toMatchObject({ status: 400, body: { details: { errorCode: 'BUNDLE_INVALID' } } })
    const garbage = await h.submit('import_wallet', {
      userId,
      walletName: 'x',
      encryptedBundle: '{not json',
      accounts: [],
    })
    expect(garbage.status).toBe(400)
    expect(await h.service.store.all('wallets')).toEqual([])
    const noUser = await h.submit('init_import_wallet', { userId: 'nobody' })
    expect(noUser).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'USER_NOT_FOUND', field: 'parameters.userId' } },
    })
  })
})
