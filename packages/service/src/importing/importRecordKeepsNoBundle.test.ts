// An import's activity record keeps its bundles only while the import may still run (awaiting the
// root quorum, it runs from its record), and never shows them: once it has ended, imported,
// refused or rejected, its stored intent holds them emptied, so a reader of the record (a parent
// root credential, or its thief) cannot copy the still-valid bundle of a refused line and import
// it into an account of its own.

import { hpkeSeal } from '@latchkey/protocol/hpke'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { english, generateMnemonic } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { openSignedBundle } from '../kernel/crypto/index.ts'
import { cleared } from '../pipeline/executeActivity.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  resultOf,
  softPasskey,
  type TestKey,
  testKey,
} from '../testing/harness.ts'

async function importKey(h: Harness): Promise<Uint8Array> {
  const { importBundle } = resultOf(
    'latchkey_init_user_import',
    await h.submit('latchkey_init_user_import', {}),
  )
  return hexToBytes(
    openSignedBundle<{ targetPublic: string }>(importBundle, hexToBytes(h.service.dev.signerPublicKey))
      .targetPublic,
  )
}

const seal = (plaintext: Uint8Array, receiverPublicKey: Uint8Array) =>
  JSON.stringify(hpkeSeal({ plaintext, receiverPublicKey }))

/** Every `encryptedBundle` value anywhere in `value`. */
function bundlesIn(value: Json): unknown[] {
  if (!value || typeof value !== 'object') return []
  return [
    ...('encryptedBundle' in value ? [value.encryptedBundle] : []),
    ...Object.values(value).flatMap(bundlesIn),
  ]
}

/** A signed request sent as the same bytes each time (a client's retry, or a captured request). */
function signed(h: Harness, path: string, type: string, parameters: Json, as: TestKey = h.root) {
  const body = JSON.stringify({
    type,
    timestampMs: String(h.clock.now()),
    organizationId: h.organizationId,
    parameters,
  })
  const [header, value] = as.stamp(body)
  return () => h.post(`/public/v1/submit/${path}`, body, { [header]: value })
}

const IMPORT_USER = 'ACTIVITY_TYPE_LATCHKEY_IMPORT_USER'

/** The stored activity as `get_activity` shows it to the parent's root credential. */
const recordOf = async (h: Harness, activityId: string) =>
  (await h.query('get_activity', { activityId })).body.activity

describe('an import’s activity record keeps no bundle once the import has ended', () => {
  it('a refused line’s bundle cannot be read from get_activity, so not imported into another account', async () => {
    const h = await createHarness()
    const bundle = seal(utf8ToBytes(generateMnemonic(english)), await importKey(h))
    const line = {
      externalId: 'privy:person',
      // A typo in the address the operator expects: the line is refused, nothing is spent.
      addresses: [`0x${'00'.repeat(20)}`],
      wallets: [{ walletName: 'Main', encryptedBundle: bundle, accounts: [ETHEREUM_ACCOUNT] }],
    }
    const send = signed(h, 'latchkey_import_user', IMPORT_USER, line)
    const refused = await send()
    expect(refused.status).toBe(400)
    expect(refused.body.details.field).toBe('parameters.addresses[0]')
    const [failed] = (await h.service.store.all('activities')).filter((row) => row.type === IMPORT_USER)
    expect(failed!.status).toBe('ACTIVITY_STATUS_FAILED')
    // The same request again (a client's retry) is a replay: it answers as the stored activity did.
    const replay = await send()
    expect(replay).toMatchObject({ status: 400, body: { details: refused.body.details } })
    expect((await h.service.store.all('activities')).filter((row) => row.type === IMPORT_USER)).toHaveLength(
      1,
    )

    // Later, with only the parent's root credential: the record holds no bundle to replay.
    h.clock.advance(30 * 86_400_000)
    const record = await recordOf(h, failed!.id)
    expect(record.intent.latchkeyImportUserIntent).toMatchObject({
      externalId: 'privy:person',
      wallets: [{ walletName: 'Main', encryptedBundle: '', accounts: [ETHEREUM_ACCOUNT] }],
    })
    expect(JSON.stringify(record)).not.toContain(JSON.parse(bundle).ciphertext)
    const copied = bundlesIn(record)[0]
    const passkey = softPasskey()
    const stolen = await h.submit('latchkey_import_user', {
      externalId: 'mallory',
      passkeys: [{ credentialId: passkey.credentialId, cosePublicKey: passkey.cosePublicKey }],
      wallets: [{ walletName: 'loot', encryptedBundle: copied, accounts: [ETHEREUM_ACCOUNT] }],
    })
    expect(stolen.status).toBe(400)
    // An emptied bundle is no bundle: refused as missing, nothing opened.
    expect(stolen.body.details).toMatchObject({
      errorCode: 'FIELD_REQUIRED',
      field: 'parameters.wallets[0].encryptedBundle',
    })
    expect(await h.service.store.all('wallets')).toEqual([])

    // Control: the operator, who still has the bundle, imports the corrected line with it.
    h.clock.advance(1000)
    const { addresses: _typo, ...corrected } = line
    const imported = resultOf('latchkey_import_user', await h.submit('latchkey_import_user', corrected))
    expect(imported).toMatchObject({ skipped: false, walletIds: [expect.any(String)] })
  })

  it('a completed import’s record, its answer and its replay hold no bundle; the import is whole', async () => {
    const h = await createHarness()
    const key = await importKey(h)
    const send = signed(h, 'latchkey_import_user', IMPORT_USER, {
      externalId: 'p',
      email: 'p@example.com',
      wallets: [
        {
          walletName: 'W',
          encryptedBundle: seal(utf8ToBytes(generateMnemonic(english)), key),
          accounts: [ETHEREUM_ACCOUNT],
        },
      ],
      privateKeys: [
        {
          privateKeyName: 'hot',
          encryptedBundle: seal(secp256k1.utils.randomSecretKey(), key),
          curve: 'CURVE_SECP256K1',
          addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
        },
      ],
    })
    const first = await send()
    const result = resultOf('latchkey_import_user', first)
    expect(result).toMatchObject({ walletIds: [expect.any(String)], privateKeyIds: [expect.any(String)] })
    expect(bundlesIn(first.body.activity.intent)).toEqual(['', ''])
    expect(first.body.activity.intent.latchkeyImportUserIntent).toMatchObject({
      externalId: 'p',
      email: 'p@example.com',
      wallets: [{ walletName: 'W', accounts: [ETHEREUM_ACCOUNT] }],
      privateKeys: [{ privateKeyName: 'hot', curve: 'CURVE_SECP256K1' }],
    })
    expect(bundlesIn(await recordOf(h, first.body.activity.id))).toEqual(['', ''])
    const replay = await send()
    expect(replay.body.activity).toMatchObject({
      id: first.body.activity.id,
      status: 'ACTIVITY_STATUS_COMPLETED',
    })
    expect(replay.body.activity.result).toEqual(first.body.activity.result)
    expect(bundlesIn(replay.body.activity)).toEqual(['', ''])
  })

  it('an import waiting for the root quorum keeps its bundle stored (shown to no one), runs from it once approved, then keeps none; a rejected one keeps none', async () => {
    const h = await createHarness()
    const key = await importKey(h)
    // Two root users, both needed: the operator's import waits for the second one's approval.
    const second = testKey()
    const [root] = (await h.service.store.get('organizations', h.organizationId))!.rootUserIds
    const { userIds } = resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'second',
            apiKeys: [second.apiKey('second')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    resultOf(
      'update_root_quorum',
      await h.submit('update_root_quorum', { threshold: 2, userIds: [root!, userIds[0]] }),
    )
    const lineOf = (externalId: string) => ({
      externalId,
      wallets: [
        {
          walletName: 'W',
          encryptedBundle: seal(utf8ToBytes(generateMnemonic(english)), key),
          accounts: [ETHEREUM_ACCOUNT],
        },
      ],
    })
    const line = lineOf('held')
    const send = signed(h, 'latchkey_import_user', IMPORT_USER, line)
    const pending = (await send()).body.activity
    expect(pending.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    // It runs later from its record: the stored record keeps its bundle meanwhile, and shows it to
    // no one (test/importing/heldImportBundleShownToNoOne.test.ts).
    expect(bundlesIn((await h.service.store.get('activities', pending.id))!.intent as Json)).toEqual([
      line.wallets[0]!.encryptedBundle,
    ])
    expect(bundlesIn(await recordOf(h, pending.id))).toEqual([''])

    const approved = await h.submit('approve_activity', { fingerprint: pending.fingerprint }, { as: second })
    expect(approved.body.activity).toMatchObject({ id: pending.id, status: 'ACTIVITY_STATUS_COMPLETED' })
    const result = approved.body.activity.result.latchkeyImportUserResult
    expect(result).toMatchObject({ skipped: false, walletIds: [expect.any(String)] })
    expect(await h.service.store.get('wallets', result.walletIds[0])).toMatchObject({
      organizationId: result.subOrganizationId,
    })
    expect(await h.service.store.all('wallets')).toHaveLength(1)
    expect(bundlesIn(approved.body.activity)).toEqual([''])
    expect(bundlesIn(await recordOf(h, pending.id))).toEqual([''])
    // The submitter's retry of the same request answers with that activity.
    const replay = await send()
    expect(replay.body.activity).toMatchObject({ id: pending.id, status: 'ACTIVITY_STATUS_COMPLETED' })
    expect(bundlesIn(replay.body.activity)).toEqual([''])

    // Rejected, it has ended too.
    h.clock.advance(1000)
    const other = (await h.submit('latchkey_import_user', lineOf('rejected'))).body.activity
    const stored = async () => bundlesIn((await h.service.store.get('activities', other.id))!.intent as Json)
    expect(await stored()).toHaveLength(1)
    expect((await stored())[0]).not.toBe('')
    const rejected = await h.submit('reject_activity', { fingerprint: other.fingerprint }, { as: second })
    expect(rejected.body.activity).toMatchObject({ id: other.id, status: 'ACTIVITY_STATUS_REJECTED' })
    expect(bundlesIn(await recordOf(h, other.id))).toEqual([''])
    expect(await stored()).toEqual([''])
    expect(await h.service.store.all('wallets')).toHaveLength(1)
  })

  it('import_wallet and import_private_key keep no bundle in their records once done', async () => {
    const h = await createHarness()
    const userId = h.service.dev.userId
    const targetOf = async (path: 'init_import_wallet' | 'init_import_private_key') =>
      hexToBytes(
        openSignedBundle<{ targetPublic: string }>(
          resultOf(path, await h.submit(path, { userId })).importBundle,
          hexToBytes(h.service.dev.signerPublicKey),
        ).targetPublic,
      )
    const wallet = await h.submit('import_wallet', {
      userId,
      walletName: 'Imported',
      encryptedBundle: seal(utf8ToBytes(generateMnemonic(english)), await targetOf('init_import_wallet')),
      accounts: [ETHEREUM_ACCOUNT],
    })
    resultOf('import_wallet', wallet)
    h.clock.advance(1000)
    const privateKey = await h.submit('import_private_key', {
      userId,
      privateKeyName: 'k',
      encryptedBundle: seal(secp256k1.utils.randomSecretKey(), await targetOf('init_import_private_key')),
      curve: 'CURVE_SECP256K1',
      addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
    })
    resultOf('import_private_key', privateKey)
    for (const reply of [wallet, privateKey])
      expect(bundlesIn(await recordOf(h, reply.body.activity.id))).toEqual([''])

    // Refused by the policies (a user no policy lets import): ended, its record keeps none either.
    const member = testKey()
    resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'member',
            apiKeys: [member.apiKey('m')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    const denied = await h.submit(
      'import_wallet',
      {
        userId,
        walletName: 'x',
        encryptedBundle: '{"ciphertext":"a secret"}',
        accounts: [],
      },
      { as: member },
    )
    expect(denied.status).toBe(403)
    const [deniedRow] = (await h.service.store.all('activities')).filter(
      (row) => row.type === 'ACTIVITY_TYPE_IMPORT_WALLET' && row.status === 'ACTIVITY_STATUS_FAILED',
    )
    expect(deniedRow!.intent).toMatchObject({ walletName: 'x', encryptedBundle: '' })
  })

  it('clears nested paths through lists, leaving what a path does not reach', () => {
    const intent = {
      externalId: 'x',
      wallets: [{ walletName: 'a', encryptedBundle: 'ct1' }, { walletName: 'b' }, 'odd'],
      privateKeys: 'not a list',
      nested: { list: [{ secret: 's', keep: 1 }] },
    }
    const copy = cleared(intent, [
      'wallets[].encryptedBundle',
      'privateKeys[].encryptedBundle',
      'nested.list[].secret',
      'absent[].x',
    ])
    expect(copy).toEqual({
      externalId: 'x',
      wallets: [{ walletName: 'a', encryptedBundle: '' }, { walletName: 'b' }, 'odd'],
      privateKeys: 'not a list',
      nested: { list: [{ secret: '', keep: 1 }] },
    })
    // The input is not changed.
    expect(intent.wallets[0]).toEqual({ walletName: 'a', encryptedBundle: 'ct1' })
  })
})
