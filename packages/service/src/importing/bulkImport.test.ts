// The bulk import's client side against a real service in this process: bad lines reported with
// their numbers and nothing else affected, reruns that skip, plaintext secrets only from an
// owner-only file, and the operator export taken back by import.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { p256 } from '@noble/curves/nist.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { english, generateMnemonic, mnemonicToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { createService, type Service } from '../assembly/createService.ts'
import { ETHEREUM_ACCOUNT } from '../testing/harness.ts'
import { type BulkImportOptions, bulkImport, IMPORTED_BATCH, type Rejection } from './bulkImport.ts'
import { exportUsers } from './exportUsers.ts'
import { importClient } from './importClient.ts'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-import-'))
const services: Service[] = []
afterAll(async () => {
  for (const service of services) await service.close()
  rmSync(dir, { recursive: true, force: true })
})

async function serviceAndClient() {
  const service = await createService()
  services.push(service)
  const client = importClient({
    url: 'http://service.test',
    organizationId: service.dev.organizationId,
    privateKey: hexToBytes(service.dev.apiPrivateKey),
    trustedSignerPublicKey: hexToBytes(service.dev.signerPublicKey),
    fetch: (input, init) => service.fetch(input, init),
  })
  return { service, client }
}

function file(name: string, lines: unknown[], mode = 0o600): string {
  const path = join(dir, name)
  writeFileSync(
    path,
    lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n'),
  )
  chmodSync(path, mode)
  return path
}

/** As `latchkey-service import` runs it; `calls` counts what the client sent. */
async function run(
  client: ReturnType<typeof importClient>,
  path: string,
  options: { alreadyImported?: BulkImportOptions['alreadyImported'] } = {},
) {
  const rejected: Rejection[] = []
  const calls = { submitted: 0, asked: 0, importKey: 0 }
  const totals = await bulkImport({
    file: path,
    submit: (params) => {
      calls.submitted++
      return client.importUser(params)
    },
    importKey: () => {
      calls.importKey++
      return client.importKey()
    },
    alreadyImported: (externalIds) => {
      calls.asked++
      return (options.alreadyImported ?? ((ids) => client.importedAmong(ids)))(externalIds)
    },
    concurrency: 3,
    onRejected: (r) => rejected.push(r),
  })
  return { totals, calls, rejected: rejected.sort((a, b) => a.line - b.line) }
}

const subOrganizations = async (service: Service) =>
  (await service.store.findBy('organizations', 'parentOrganizationId', service.dev.organizationId)).length

describe('bulkImport', () => {
  it('reports each bad line with its number and reason, imports the rest, and a rerun skips them all', async () => {
    const { service, client } = await serviceAndClient()
    const mnemonic = generateMnemonic(english)
    const strangerKey = p256.getPublicKey(p256.utils.randomSecretKey(), false)
    const { hpkeSeal } = await import('@latchkey/protocol/hpke')
    const foreignBundle = JSON.stringify(
      hpkeSeal({ plaintext: new TextEncoder().encode(mnemonic), receiverPublicKey: strangerKey }),
    )
    const path = file('mixed.jsonl', [
      {
        externalId: 'u1',
        email: 'one@example.com',
        wallets: [{ walletName: 'W', mnemonic, accounts: [ETHEREUM_ACCOUNT] }],
      },
      '{"externalId": "u2", "email": ',
      { externalId: 'u3', email: 'three@example.com', favouriteColour: 'blue' },
      {
        externalId: 'u4',
        privateKeys: [{ privateKeyName: 'k', privateKey: 'abc', curve: 'CURVE_SECP256K1' }],
      },
      {
        externalId: 'u5',
        wallets: [{ walletName: 'W', encryptedBundle: foreignBundle, accounts: [ETHEREUM_ACCOUNT] }],
      },
      { externalId: 'u1', email: 'again@example.com' },
      '',
      {
        externalId: 'u6',
        phoneNumber: '+15551234567',
        oauthProviders: [{ issuer: 'https://accounts.google.com', subject: 's6' }],
      },
    ])
    const first = await run(client, path)
    expect(first.rejected.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 2, reason: expect.stringMatching(/^not JSON/) },
      { line: 3, reason: expect.stringMatching(/favouriteColour is an unknown field/) },
      { line: 4, reason: expect.stringMatching(/privateKeys\[0\]\.privateKey must be 32 bytes of hex/) },
      {
        line: 5,
        reason: expect.stringMatching(
          /wallets\[0\]\.encryptedBundle does not open with this organization's import key/,
        ),
      },
      { line: 6, reason: expect.stringMatching(/duplicate externalId/) },
    ])
    expect(first.totals).toMatchObject({ read: 7, imported: 2, skipped: 0, rejected: 5 })
    expect(await subOrganizations(service)).toBe(2)
    // The imported wallet holds the mnemonic's address; the activity record never held the mnemonic.
    const account = (await service.store.all('walletAccounts')).find(
      (row) => row.address === mnemonicToAccount(mnemonic).address,
    )
    expect(account).toBeDefined()
    const activities = JSON.stringify(await service.store.all('activities'))
    expect(activities).not.toContain(mnemonic)

    const again = await run(client, path)
    expect(again.totals).toMatchObject({ imported: 0, skipped: 2, rejected: 5 })
    // Only the line the service refused (its bundle) is sent again; the done ones are not.
    expect(again.calls.submitted).toBe(1)
    expect(await subOrganizations(service)).toBe(2)
  })

  it('a rerun asks which external ids are done, a batch at a time, and encrypts and sends none of them', async () => {
    const { service, client } = await serviceAndClient()
    const count = IMPORTED_BATCH + 30
    const lines = Array.from({ length: count }, (_, i) => ({
      externalId: `r${i}`,
      email: `r${i}@example.com`,
      // A few plaintext wallets: encrypted to the import key only when sent.
      ...(i % 60 === 0
        ? {
            wallets: [{ walletName: 'W', mnemonic: generateMnemonic(english), accounts: [ETHEREUM_ACCOUNT] }],
          }
        : {}),
    }))
    const path = file('rerun.jsonl', lines)
    // Killed after the first 70: those are done.
    const head = await run(client, file('head.jsonl', lines.slice(0, 70)))
    expect(head.totals).toMatchObject({ imported: 70, rejected: 0 })
    const resumed = await run(client, path)
    expect(resumed.totals).toMatchObject({ read: count, imported: count - 70, skipped: 70, rejected: 0 })
    expect(resumed.calls).toMatchObject({ submitted: count - 70, asked: 2 })
    expect(await subOrganizations(service)).toBe(count)

    const again = await run(client, path)
    expect(again.totals).toMatchObject({ imported: 0, skipped: count, rejected: 0 })
    // Nothing encrypted (the import key is never fetched), nothing stamped as an activity.
    expect(again.calls).toEqual({ submitted: 0, asked: 2, importKey: 0 })

    // A service that cannot tell (an older one): every line is sent, and the service skips them.
    const older = await run(client, path, { alreadyImported: async () => undefined })
    expect(older.totals).toMatchObject({ imported: 0, skipped: count, rejected: 0 })
    expect(older.calls).toMatchObject({ submitted: count, asked: 1 })
    expect(await subOrganizations(service)).toBe(count)
  })

  it('takes plaintext secrets only from a file nobody but its owner can read', async () => {
    const { service, client } = await serviceAndClient()
    const path = file(
      'open.jsonl',
      [
        {
          externalId: 'p1',
          wallets: [{ walletName: 'W', mnemonic: generateMnemonic(english), accounts: [ETHEREUM_ACCOUNT] }],
        },
      ],
      0o644,
    )
    const { rejected, totals } = await run(client, path)
    expect(rejected).toEqual([{ line: 1, reason: expect.stringMatching(/chmod 600/) }])
    expect(totals.imported).toBe(0)
    expect(await subOrganizations(service)).toBe(0)
  })

  it('never quotes a line that is not JSON in its reason: the line may hold a plaintext secret', async () => {
    const { service, client } = await serviceAndClient()
    // Fixed, so that no word of the mnemonic begins like a word of a reason.
    const mnemonic = 'legal winner thank year wave sausage worth useful legal winner thank yellow'
    const privateKey = '4c0883a69102937d6231471b5dbb6204fe512961708279f2e3e8ae3a1a2b5f3e'
    // Hand-written mistakes next to a secret: V8's JSON.parse quotes the text around the fault
    // ("Unexpected token ''', ..."mnemonic":'legal win"..."), and reasons go to the log and --rejected.
    const path = file('quoted.jsonl', [
      `{"externalId":"q1","wallets":[{"walletName":"W","mnemonic":'${mnemonic}',"accounts":[]}]}`,
      `{"externalId":"q2","wallets":[{"walletName":"W","mnemonic":${mnemonic},"accounts":[]}]}`,
      `{"externalId":"q3","privateKeys":[{"privateKeyName":"k","privateKey":'${privateKey}'}]}`,
      `{"privateKey":"${privateKey}"}}`,
    ])
    const { rejected, totals } = await run(client, path)
    expect(rejected.map(({ line, reason }) => ({ line, reason }))).toEqual(
      [1, 2, 3, 4].map((line) => ({ line, reason: expect.stringMatching(/^not JSON/) })),
    )
    expect(totals).toMatchObject({ read: 4, imported: 0, rejected: 4 })
    const reasons = rejected.map(({ reason }) => reason).join('\n')
    // Not one word of the mnemonic (BIP-39 words are known by their first four letters), nor a
    // run of four hex digits of the key.
    for (const word of mnemonic.split(' ')) expect(reasons).not.toContain(word.slice(0, 4))
    for (let i = 0; i + 4 <= privateKey.length; i++) expect(reasons).not.toContain(privateKey.slice(i, i + 4))
    expect(await subOrganizations(service)).toBe(0)
  })

  it('a line whose activity waits for the root quorum is reported as waiting, with the activity, not as an HTTP status', async () => {
    const { service, client } = await serviceAndClient()
    // Two root users, both needed: every activity of the operator's key waits for the other's vote.
    const [root] = (await service.store.get('organizations', service.dev.organizationId))!.rootUserIds
    const second = await client.submit('create_users', {
      users: [{ userName: 'second', apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
    })
    const secondId = (second.result as { userIds: string[] }).userIds[0]!
    const quorum = await client.submit('update_root_quorum', { threshold: 2, userIds: [root!, secondId] })
    expect(quorum.status).toBe(200)
    const { rejected, totals } = await run(client, file('waiting.jsonl', [{ externalId: 'w1' }]))
    expect(totals).toMatchObject({ imported: 0, rejected: 1 })
    const waiting = (
      await service.store.findBy('activities', 'organizationId', service.dev.organizationId)
    ).filter((row) => row.type === 'ACTIVITY_TYPE_LATCHKEY_IMPORT_USER')
    expect(waiting).toHaveLength(1)
    // What the operator must do: have it approved (it then imports the person), or lower the quorum.
    expect(rejected[0]!.reason).toContain('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    expect(rejected[0]!.reason).toContain(waiting[0]!.id)
  })

  it('the operator export, without secrets, imports into another service as it is', async () => {
    const { service, client } = await serviceAndClient()
    const mnemonic = generateMnemonic(english)
    const path = file('source.jsonl', [
      {
        externalId: 'x1',
        email: 'x1@example.com',
        oauthProviders: [{ issuer: 'https://accounts.google.com', subject: 'x1' }],
        wallets: [{ walletName: 'W', mnemonic, accounts: [ETHEREUM_ACCOUNT] }],
      },
      { externalId: 'x2', phoneNumber: '+15557654321' },
    ])
    expect((await run(client, path)).totals.imported).toBe(2)
    const lines: string[] = []
    await exportUsers(service.store, service.dev.organizationId, (user) => {
      lines.push(JSON.stringify(user))
    })
    const exported = lines.map((line) => JSON.parse(line))
    expect(exported).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          externalId: 'x1',
          email: 'x1@example.com',
          oauthProviders: [expect.objectContaining({ issuer: 'https://accounts.google.com', subject: 'x1' })],
          addresses: [mnemonicToAccount(mnemonic).address],
        }),
        expect.objectContaining({ externalId: 'x2', phoneNumber: '+15557654321' }),
      ]),
    )
    expect(lines.join('\n')).not.toMatch(/sealed|mnemonic|privateKey/i)
    const target = await serviceAndClient()
    const back = await run(target.client, file('export.jsonl', lines))
    expect(back.totals).toMatchObject({ imported: 2, rejected: 0 })
    const again: string[] = []
    await exportUsers(target.service.store, target.service.dev.organizationId, (user) => {
      again.push(JSON.stringify({ ...user, addresses: undefined }))
    })
    expect(again.sort()).toEqual(
      lines.map((line) => JSON.stringify({ ...JSON.parse(line), addresses: undefined })).sort(),
    )
  })
})
