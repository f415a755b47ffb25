// A `latchkey_import_user` that waits (its submitter's second factor, or the root quorum) keeps the
// person's bundles in its stored record, since it runs from that record once approved, and has
// spent none of them yet. Its record shows them to no one (`bearerParameters`): not to another
// root user of the parent, who with a root quorum of 1 and no MFA policy of their own would
// otherwise copy a bundle out of get_activity, import it at once into an account of theirs (their
// own passkey) and export the person's mnemonic; not to its submitter either, who holds the line.
// The held import still runs from its record, and one rejected leaves its bundle unspent for a
// corrected resubmission.
import { hpkeOpen, hpkeSeal } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base32nopad } from '@scure/base'
import { english, generateMnemonic, mnemonicToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { openSignedBundle } from '../../src/kernel/crypto/index.ts'
import { totp } from '../../src/mfa/totp.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  type Reply,
  resultOf,
  softPasskey,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'

/** Every `encryptedBundle` value anywhere in `value`. */
function bundlesIn(value: Json): unknown[] {
  if (!value || typeof value !== 'object') return []
  return [
    ...('encryptedBundle' in value ? [value.encryptedBundle] : []),
    ...Object.values(value).flatMap(bundlesIn),
  ]
}

/** A parent with its import key and a second root user (`second`), each root acting alone unless `threshold` says otherwise. */
async function parentWithTwoRoots(threshold: 1 | 2) {
  const h = await createHarness()
  const root = h.service.dev.userId
  const { importBundle } = resultOf(
    'latchkey_init_user_import',
    await h.submit('latchkey_init_user_import', {}),
  )
  const importKey = hexToBytes(
    openSignedBundle<{ targetPublic: string }>(importBundle, hexToBytes(h.service.dev.signerPublicKey))
      .targetPublic,
  )
  const second = testKey()
  h.clock.advance(1)
  const { userIds } = resultOf(
    'create_users',
    await h.submit('create_users', {
      users: [
        {
          userName: 'ops',
          apiKeys: [second.apiKey('ops')],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    }),
  )
  h.clock.advance(1)
  resultOf(
    'update_root_quorum',
    await h.submit('update_root_quorum', { threshold, userIds: [root, userIds[0]] }),
  )
  return { h, root, second, importKey }
}

/** The importing root's imports need its authenticator app; answers a code for now. */
async function importsNeedACode(h: Harness, root: string): Promise<() => string> {
  h.clock.advance(1)
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await h.submit('latchkey_create_totp_factor', { userId: root }),
  )
  const code = () => totp(base32nopad.decode(enrolled.secret), h.clock.now())
  h.clock.advance(1)
  resultOf(
    'latchkey_confirm_totp_factor',
    await h.submit('latchkey_confirm_totp_factor', {
      userId: root,
      factorId: enrolled.factorId,
      code: code(),
    }),
  )
  h.clock.advance(1)
  resultOf(
    'create_mfa_policy',
    await h.submit('create_mfa_policy', {
      userId: root,
      mfaPolicyName: 'imports need a code',
      condition: "activity.type == 'ACTIVITY_TYPE_LATCHKEY_IMPORT_USER'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
      order: 0,
    }),
  )
  return code
}

const personLine = (externalId: string, mnemonic: string, importKey: Uint8Array) => ({
  externalId,
  email: `${externalId.replace(/\W/g, '')}@example.com`,
  wallets: [
    {
      walletName: 'Main',
      encryptedBundle: JSON.stringify(
        hpkeSeal({ plaintext: utf8ToBytes(mnemonic), receiverPublicKey: importKey }),
      ),
      accounts: [ETHEREUM_ACCOUNT],
    },
  ],
})

/**
 * The thief's attempt with the bundle they read: imported into an account of theirs (their own
 * passkey) and exported. Answers what they got: whether the copy imported, and the mnemonic.
 */
async function stealWith(
  h: Harness,
  thief: TestKey,
  copied: unknown,
): Promise<{ imported: boolean; mnemonic?: string }> {
  const passkey = softPasskey()
  h.clock.advance(1)
  const replay = await h.submit(
    'latchkey_import_user',
    {
      externalId: 'mallory',
      passkeys: [{ credentialId: passkey.credentialId, cosePublicKey: passkey.cosePublicKey }],
      wallets: [{ walletName: 'loot', encryptedBundle: copied as string, accounts: [ETHEREUM_ACCOUNT] }],
    },
    { as: thief },
  )
  if (replay.status !== 200 || replay.body.activity.status !== 'ACTIVITY_STATUS_COMPLETED')
    return { imported: false }
  const mine = resultOf('latchkey_import_user', replay)
  const clientKey = p256.utils.randomSecretKey()
  h.clock.advance(1)
  const exported = await h.submit(
    'export_wallet',
    { walletId: mine.walletIds[0], targetPublicKey: bytesToHex(p256.getPublicKey(clientKey, false)) },
    { as: passkey, organizationId: mine.subOrganizationId },
  )
  const data = openSignedBundle<{ encappedPublic: string; ciphertext: string }>(
    resultOf('export_wallet', exported).exportBundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  const plaintext = await hpkeOpen({
    ciphertext: data,
    receiverPublicKey: p256.getPublicKey(clientKey, false),
    dh: (sender) => p256.getSharedSecret(clientKey, sender, true).slice(1),
  })
  return { imported: true, mnemonic: new TextDecoder().decode(plaintext) }
}

/** The address the import made in the person's account. */
async function importedAddress(h: Harness, reply: Reply): Promise<string | undefined> {
  const result = reply.body.activity.result.latchkeyImportUserResult
  return (await h.service.store.findBy('walletAccounts', 'organizationId', result.subOrganizationId))[0]
    ?.address
}

describe('latchkey_import_user waiting: its record shows its bundles to no one', () => {
  it('held for the submitter’s code: another parent root reads no bundle, so cannot import it into its own account and export the mnemonic; the held import then runs from its record', async () => {
    const { h, root, second: thief, importKey } = await parentWithTwoRoots(1)
    const code = await importsNeedACode(h, root)
    const mnemonic = generateMnemonic(english)
    const line = personLine('privy:victim', mnemonic, importKey)
    h.clock.advance(1)
    const held = await h.submit('latchkey_import_user', line)
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // The other root's read of the record: what it shows opens into no account of the thief's.
    const byThief = await h.query('get_activity', { activityId: held.body.activity.id }, { as: thief })
    expect(byThief.status).toBe(200)
    const stolen = await stealWith(h, thief, bundlesIn(byThief.body.activity)[0])
    expect({ copyImported: stolen.imported, mnemonicStolen: stolen.mnemonic === mnemonic }).toEqual({
      copyImported: false,
      mnemonicStolen: false,
    })
    // Stored whole (it runs from it), shown to no one: not to the other root, not in the
    // submission's answer, not to the submitter's get_activity.
    expect(
      bundlesIn((await h.service.store.get('activities', held.body.activity.id))!.intent as Json),
    ).toEqual([line.wallets[0]!.encryptedBundle])
    expect(bundlesIn(byThief.body.activity)).toEqual([''])
    expect(JSON.stringify(byThief.body)).not.toContain(
      JSON.parse(line.wallets[0]!.encryptedBundle).ciphertext,
    )
    expect(bundlesIn(held.body.activity)).toEqual([''])
    expect(
      bundlesIn((await h.query('get_activity', { activityId: held.body.activity.id })).body.activity),
    ).toEqual([''])

    // The submitter's code (a later one: each code is taken once) runs the held import from its
    // record: the person's wallet is theirs.
    h.clock.advance(30_000)
    const done = await h.submit('latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(done.status).toBe(200)
    const ran = await h.query('get_activity', { activityId: held.body.activity.id })
    expect(ran.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await importedAddress(h, ran)).toBe(mnemonicToAccount(mnemonic).address)
    expect(
      bundlesIn((await h.service.store.get('activities', held.body.activity.id))!.intent as Json),
    ).toEqual([''])
  })

  it('waiting for the root quorum: the voter reads no bundle; its approval imports the person from the record', async () => {
    const { h, second, importKey } = await parentWithTwoRoots(2)
    const mnemonic = generateMnemonic(english)
    const line = personLine('privy:quorum', mnemonic, importKey)
    h.clock.advance(1)
    const pending = (await h.submit('latchkey_import_user', line)).body.activity
    expect(pending.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const byVoter = await h.query('get_activity', { activityId: pending.id }, { as: second })
    expect(byVoter.body.activity.canApprove).toBe(true)
    expect(bundlesIn(byVoter.body.activity)).toEqual([''])
    // The rest of the line is shown as sent: the voter sees whom it imports.
    expect(byVoter.body.activity.intent.latchkeyImportUserIntent).toMatchObject({
      externalId: 'privy:quorum',
      email: line.email,
      wallets: [{ walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] }],
    })
    h.clock.advance(1)
    const approved = await h.submit('approve_activity', { fingerprint: pending.fingerprint }, { as: second })
    expect(approved.body.activity).toMatchObject({ id: pending.id, status: 'ACTIVITY_STATUS_COMPLETED' })
    expect(bundlesIn(approved.body.activity)).toEqual([''])
    expect(await importedAddress(h, approved)).toBe(mnemonicToAccount(mnemonic).address)
  })

  it('a held import rejected by another root spent nothing: the operator resubmits the line with the same bundle and it imports', async () => {
    const { h, root, second, importKey } = await parentWithTwoRoots(1)
    const code = await importsNeedACode(h, root)
    const mnemonic = generateMnemonic(english)
    const line = personLine('privy:rejected', mnemonic, importKey)
    h.clock.advance(1)
    const held = (await h.submit('latchkey_import_user', line)).body.activity
    expect(held.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    h.clock.advance(1)
    const rejected = await h.submit('reject_activity', { fingerprint: held.fingerprint }, { as: second })
    expect(rejected.body.activity).toMatchObject({ id: held.id, status: 'ACTIVITY_STATUS_REJECTED' })
    // Ended, its stored record keeps no bundle either.
    expect(bundlesIn((await h.service.store.get('activities', held.id))!.intent as Json)).toEqual([''])

    h.clock.advance(1)
    const again = (await h.submit('latchkey_import_user', line)).body.activity
    expect(again.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    h.clock.advance(30_000)
    expect(
      (await h.submit('latchkey_satisfy_mfa', { fingerprint: again.fingerprint, totpCode: code() })).status,
    ).toBe(200)
    const ran = await h.query('get_activity', { activityId: again.id })
    expect(ran.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await importedAddress(h, ran)).toBe(mnemonicToAccount(mnemonic).address)
  })
})
