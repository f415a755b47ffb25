// `latchkey-service import` encrypts every plaintext "mnemonic"/"privateKey" of the operator's 0600
// file to the organization's import key, whose bundles `latchkey_import_user` opens only into new
// accounts. It learns that key from a signed bundle, and "the root key's user" from `whoami`,
// answered by whoever answers the rest. Every import bundle the service signs names an
// organization, a user and a key, so a user's own `init_import_wallet` target (one a staff user of
// the parent can get, and whose bundles open into the parent with `import_wallet`) once passed
// for the import key. The import key's bundle now carries a purpose no user's target carries: the
// command requires it, and the service never opens a bundle sealed to the import key as a user's.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hpkeOpen, hpkeSeal } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { english, generateMnemonic } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { bulkImport, type Rejection } from '../../src/importing/bulkImport.ts'
import { type ImportClientOptions, importClient } from '../../src/importing/importClient.ts'
import { openSignedBundle } from '../../src/kernel/crypto/bundles.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-import-purpose-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Fetch = NonNullable<ImportClientOptions['fetch']>
type Signed = Record<string, unknown>

const INIT = '/public/v1/submit/latchkey_init_user_import'
const WHOAMI = '/public/v1/query/whoami'
const IMPORT = '/public/v1/submit/latchkey_import_user'

const signedData = (h: Harness, bundle: string) =>
  openSignedBundle<Signed>(bundle, hexToBytes(h.service.dev.signerPublicKey))

/** A user of the dev organization (not a root) with a P-256 API key. */
async function staffUser(h: Harness): Promise<{ userId: string; key: TestKey }> {
  const key = testKey()
  const { userIds } = resultOf(
    'create_users',
    await h.submit('create_users', {
      users: [
        {
          userName: 'staff',
          apiKeys: [key.apiKey('k')],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    }),
  )
  return { userId: userIds[0] as string, key }
}

/**
 * Between the command and the service: answers `latchkey_init_user_import` with `bundle` (one the
 * service signed for someone's own import), `whoami` with `whoami` when given, and keeps every
 * encrypted wallet on its way to the service.
 */
function inTheMiddle(h: Harness, bundle: string, whoami?: { userId: string }) {
  const captured: string[] = []
  const fetch: Fetch = async (input, init) => {
    const url = String(input)
    if (url.endsWith(INIT)) {
      const real = (await (await h.service.fetch(input, init)).json()) as {
        activity: { result: { latchkeyInitUserImportResult: { importBundle: string } } }
      }
      real.activity.result.latchkeyInitUserImportResult.importBundle = bundle
      return new Response(JSON.stringify(real), { status: 200 })
    }
    if (whoami && url.endsWith(WHOAMI))
      return new Response(
        JSON.stringify({ organizationId: h.organizationId, userId: whoami.userId, username: 'root' }),
        { status: 200 },
      )
    if (url.endsWith(IMPORT)) {
      const payload = JSON.parse(String(init.body)) as {
        parameters: { wallets?: { encryptedBundle: string }[] }
      }
      for (const wallet of payload.parameters.wallets ?? []) captured.push(wallet.encryptedBundle)
    }
    return h.service.fetch(input, init)
  }
  return { fetch, captured }
}

/** The command's client as the root key, over `fetch`. */
const rootClient = (h: Harness, fetch: Fetch = (input, init) => h.service.fetch(input, init)) =>
  importClient({
    url: 'https://service.test',
    organizationId: h.organizationId,
    privateKey: hexToBytes(h.service.dev.apiPrivateKey),
    trustedSignerPublicKey: hexToBytes(h.service.dev.signerPublicKey),
    fetch,
  })

/** Runs the bulk import of one person with a plaintext mnemonic through `client`. */
async function importOne(client: ReturnType<typeof importClient>, mnemonic: string) {
  const file = join(dir, `users-${crypto.randomUUID()}.jsonl`)
  writeFileSync(
    file,
    `${JSON.stringify({
      externalId: 'privy:alice',
      email: 'alice@example.com',
      wallets: [{ walletName: 'Main', mnemonic, accounts: [ETHEREUM_ACCOUNT] }],
    })}\n`,
  )
  chmodSync(file, 0o600)
  const rejected: Rejection[] = []
  const totals = await bulkImport({
    file,
    submit: (params) => client.importUser(params),
    importKey: () => client.importKey(),
    alreadyImported: (ids) => client.importedAmong(ids),
    onRejected: (r) => rejected.push(r),
    attempts: 1,
  })
  return { totals, rejected }
}

/** Opens an export bundle made for the P-256 key `target`. */
async function openExport(h: Harness, exportBundle: string, target: Uint8Array): Promise<string> {
  const data = openSignedBundle<{ encappedPublic: string; ciphertext: string }>(
    exportBundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  return new TextDecoder().decode(
    await hpkeOpen({
      ciphertext: data,
      receiverPublicKey: p256.getPublicKey(target, false),
      dh: (sender) => p256.getSharedSecret(target, sender, true).slice(1),
    }),
  )
}

describe('the organization import key is signed as such, and no user import target is', () => {
  it("signs latchkey_init_user_import's bundle with the purpose, and init_import_wallet's and init_import_private_key's without any", async () => {
    const h = await createHarness({ clock: fakeClock(Date.now()) })
    const organizationKey = signedData(
      h,
      resultOf('latchkey_init_user_import', await h.submit('latchkey_init_user_import', {})).importBundle,
    )
    expect(organizationKey).toEqual({
      organizationId: h.organizationId,
      userId: h.service.dev.userId,
      targetPublic: (await h.service.store.get('importKeys', h.organizationId))?.publicKey,
      purpose: 'organization_import_key',
    })
    for (const path of ['init_import_wallet', 'init_import_private_key'] as const) {
      h.clock.advance(1000)
      const data = signedData(
        h,
        resultOf(path, await h.submit(path, { userId: h.service.dev.userId })).importBundle,
      )
      expect(Object.keys(data).sort()).toEqual(['organizationId', 'targetPublic', 'userId'])
      expect(data.targetPublic).not.toBe(organizationKey.targetPublic)
    }
  })

  it("refuses a staff user's own import target as the organization import key, with whoami answered as that user: nothing is encrypted, the mnemonic stays out of the parent", async () => {
    const h = await createHarness({ clock: fakeClock(Date.now()) })
    // A staff user of the parent whom a policy lets import and export (a back office).
    const staff = await staffUser(h)
    resultOf(
      'create_policy',
      await h.submit('create_policy', {
        policyName: 'back office',
        effect: 'EFFECT_ALLOW',
        condition: `activity.action == 'IMPORT' || activity.action == 'EXPORT'`,
        notes: '',
      }),
    )
    h.clock.advance(1000)
    // The staff user's own import target: a bundle the service signed, naming the organization.
    const staffTarget = resultOf(
      'init_import_wallet',
      await h.submit('init_import_wallet', { userId: staff.userId }, { as: staff.key }),
    ).importBundle as string
    const middle = inTheMiddle(h, staffTarget, { userId: staff.userId })

    const mnemonic = generateMnemonic(english)
    const { totals, rejected } = await importOne(rootClient(h, middle.fetch), mnemonic)

    expect(middle.captured).toEqual([])
    expect(totals).toMatchObject({ read: 1, imported: 0, rejected: 1 })
    expect(rejected[0]?.reason).toMatch(
      /is not the organization's import key \(its purpose is null.*nothing was encrypted to its key/,
    )
    // What the staff user could have done with a captured bundle: import it into the parent with
    // their pending target and export it. Shown with one sealed to that target by hand, so this
    // test fails if the route were closed for another reason than the purpose.
    const target = p256.utils.randomSecretKey()
    const sealed = hpkeSeal({
      plaintext: utf8ToBytes(mnemonic),
      receiverPublicKey: hexToBytes(signedData(h, staffTarget).targetPublic as string),
    })
    h.clock.advance(1000)
    const { walletId } = resultOf(
      'import_wallet',
      await h.submit(
        'import_wallet',
        {
          userId: staff.userId,
          walletName: 'loot',
          encryptedBundle: JSON.stringify(sealed),
          accounts: [ETHEREUM_ACCOUNT],
        },
        { as: staff.key },
      ),
    )
    h.clock.advance(1000)
    const { exportBundle } = resultOf(
      'export_wallet',
      await h.submit(
        'export_wallet',
        { walletId, targetPublicKey: bytesToHex(p256.getPublicKey(target, false)) },
        { as: staff.key },
      ),
    )
    expect(await openExport(h, exportBundle, target)).toBe(mnemonic)
  })

  it("refuses the root user's own import target, which names this organization and the root key's user with whoami answered honestly, and takes the organization's key", async () => {
    const h = await createHarness({ clock: fakeClock(Date.now()) })
    const rootTarget = resultOf(
      'init_import_wallet',
      await h.submit('init_import_wallet', { userId: h.service.dev.userId }),
    ).importBundle as string
    expect(signedData(h, rootTarget)).toMatchObject({
      organizationId: h.organizationId,
      userId: h.service.dev.userId,
    })
    const middle = inTheMiddle(h, rootTarget)
    await expect(rootClient(h, middle.fetch).importKey()).rejects.toThrow(
      /is not the organization's import key .*nothing was encrypted to its key/,
    )
    const mnemonic = generateMnemonic(english)
    const through = await importOne(rootClient(h, middle.fetch), mnemonic)
    expect(middle.captured).toEqual([])
    expect(through.totals).toMatchObject({ read: 1, imported: 0, rejected: 1 })

    // Control: straight to the service, the same file imports, with the key of the bundle's purpose.
    const key = await rootClient(h).importKey()
    expect(bytesToHex(key)).toBe((await h.service.store.get('importKeys', h.organizationId))?.publicKey)
    const direct = await importOne(rootClient(h), mnemonic)
    expect(direct.totals).toMatchObject({ read: 1, imported: 1, rejected: 0 })
  })

  it('opens no bundle sealed to the organization import key in import_wallet or import_private_key, root or not', async () => {
    const h = await createHarness({ clock: fakeClock(Date.now()) })
    const organizationKey = signedData(
      h,
      resultOf('latchkey_init_user_import', await h.submit('latchkey_init_user_import', {})).importBundle,
    )
    const toImportKey = (plaintext: Uint8Array) =>
      JSON.stringify(
        hpkeSeal({ plaintext, receiverPublicKey: hexToBytes(organizationKey.targetPublic as string) }),
      )
    const walletsBefore = (await h.service.store.all('wallets')).length
    const keysBefore = (await h.service.store.all('privateKeys')).length
    const userId = h.service.dev.userId
    // The root user, with a target pending for each: the bundle is sealed to another key.
    h.clock.advance(1000)
    resultOf('init_import_wallet', await h.submit('init_import_wallet', { userId }))
    h.clock.advance(1000)
    const wallet = await h.submit('import_wallet', {
      userId,
      walletName: 'w',
      encryptedBundle: toImportKey(utf8ToBytes(generateMnemonic(english))),
      accounts: [ETHEREUM_ACCOUNT],
    })
    expect(wallet).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'BUNDLE_INVALID', field: 'parameters.encryptedBundle' } },
    })
    h.clock.advance(1000)
    resultOf('init_import_private_key', await h.submit('init_import_private_key', { userId }))
    h.clock.advance(1000)
    const privateKey = await h.submit('import_private_key', {
      userId,
      privateKeyName: 'k',
      encryptedBundle: toImportKey(p256.utils.randomSecretKey()),
      curve: 'CURVE_SECP256K1',
      addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
    })
    expect(privateKey).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'BUNDLE_INVALID', field: 'parameters.encryptedBundle' } },
    })
    expect((await h.service.store.all('wallets')).length).toBe(walletsBefore)
    expect((await h.service.store.all('privateKeys')).length).toBe(keysBefore)
  })
})
