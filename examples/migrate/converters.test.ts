// The migration converters on export files the test writes in each provider's format: every line
// they make is imported by a real service (nothing rejected), what moves arrives, and what needs
// the person (embedded wallets, non-OIDC logins) is reported instead of guessed.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { afterAll, describe, expect, it } from 'vitest'
import { createService } from '../../packages/service/src/assembly/createService.ts'
import { bulkImport, type Rejection } from '../../packages/service/src/importing/bulkImport.ts'
import { exportUsers } from '../../packages/service/src/importing/exportUsers.ts'
import { importClient } from '../../packages/service/src/importing/importClient.ts'
import { fromDynamic } from './fromDynamic.ts'
import { fromPrivy } from './fromPrivy.ts'
import { fromTurnkey } from './fromTurnkey.ts'
import type { Converted } from './lines.ts'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-migrate-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Imports `converted` into a fresh service; answers what its operator export then holds. */
async function importAll(converted: Converted[]) {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.jsonl`)
  writeFileSync(file, converted.map((c) => JSON.stringify(c.line)).join('\n'), { mode: 0o600 })
  const service = await createService()
  try {
    const client = importClient({
      url: 'http://service.test',
      organizationId: service.dev.organizationId,
      privateKey: hexToBytes(service.dev.apiPrivateKey),
      fetch: (input, init) => service.fetch(input, init),
    })
    const rejected: Rejection[] = []
    const totals = await bulkImport({
      file,
      submit: (params) => client.importUser(params),
      importKey: () => client.importKey(),
      onRejected: (r) => rejected.push(r),
    })
    const exported: Record<string, unknown>[] = []
    await exportUsers(service.store, service.dev.organizationId, (user) => {
      exported.push(JSON.parse(JSON.stringify(user)))
    })
    return { totals, rejected, exported }
  } finally {
    await service.close()
  }
}

const byId = (rows: Record<string, unknown>[], id: string) => rows.find((row) => row.externalId === id)

describe('examples/migrate converters', () => {
  it('Privy user objects: DID, e-mail, phone, Google and Apple move; embedded wallets and Twitter need the person', async () => {
    const page = {
      data: [
        {
          id: 'did:privy:alice',
          created_at: 1700000000,
          linked_accounts: [
            { type: 'email', address: 'alice@example.com' },
            { type: 'phone', number: '+1 (555) 010-2000' },
            { type: 'google_oauth', subject: '10987', email: 'alice@gmail.com', name: 'Alice' },
            { type: 'twitter_oauth', subject: '42', username: 'alice' },
            { type: 'wallet', address: '0xAbC', chain_type: 'ethereum', wallet_client_type: 'privy' },
            { type: 'wallet', address: '0xdef', chain_type: 'ethereum', wallet_client_type: 'metamask' },
          ],
        },
        { id: 'did:privy:bob', linked_accounts: [{ type: 'apple_oauth', subject: 'apple-bob' }] },
      ],
      next_cursor: null,
    }
    const file = join(dir, 'privy.json')
    writeFileSync(file, JSON.stringify(page))
    // The script as an operator runs it.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      join(import.meta.dirname, 'fromPrivy.ts'),
      file,
    ])
    const converted = page.data.map(fromPrivy)
    expect(stdout.trim().split('\n')).toEqual(converted.map((c) => JSON.stringify(c.line)))
    expect(stderr).toMatch(/did:privy:alice: twitter login/)
    expect(stderr).toMatch(/embedded ethereum wallet 0xAbC/)
    expect(stderr).not.toMatch(/0xdef/)
    const { totals, rejected, exported } = await importAll(converted)
    expect(rejected).toEqual([])
    expect(totals.imported).toBe(2)
    expect(byId(exported, 'privy:did:privy:alice')).toMatchObject({
      email: 'alice@example.com',
      phoneNumber: '+15550102000',
      oauthProviders: [expect.objectContaining({ issuer: 'https://accounts.google.com', subject: '10987' })],
    })
    expect(byId(exported, 'privy:did:privy:bob')).toMatchObject({
      oauthProviders: [
        expect.objectContaining({ issuer: 'https://appleid.apple.com', subject: 'apple-bob' }),
      ],
    })
  })

  it('Dynamic users: verified e-mail, phone (with its country code) and Google move; the embedded wallet needs the person', async () => {
    const users = [
      {
        id: '7b2f0c4e-0000-4000-8000-000000000001',
        username: 'carol',
        verifiedCredentials: [
          { format: 'email', email: 'carol@example.com' },
          { format: 'phoneNumber', phoneNumber: '5550103000', phoneCountryCode: '1' },
          { format: 'oauth', oauthProvider: 'google', oauthAccountId: 'g-carol' },
          { format: 'oauth', oauthProvider: 'discord', oauthAccountId: 'd-carol' },
          { format: 'blockchain', address: '0x1234', chain: 'EVM', walletProvider: 'embeddedWallet' },
        ],
      },
    ]
    const converted = users.map(fromDynamic)
    expect(converted[0]!.needsUser).toEqual([
      expect.stringMatching(/^discord login/),
      expect.stringMatching(/^embedded wallet 0x1234/),
    ])
    const { rejected, exported } = await importAll(converted)
    expect(rejected).toEqual([])
    expect(byId(exported, 'dynamic:7b2f0c4e-0000-4000-8000-000000000001')).toMatchObject({
      userName: 'carol',
      email: 'carol@example.com',
      phoneNumber: '+15550103000',
      oauthProviders: [
        expect.objectContaining({ issuer: 'https://accounts.google.com', subject: 'g-carol' }),
      ],
    })
  })

  it('Turnkey get_organization answers: contacts, OAuth identities and passkeys move; wallets need the person', async () => {
    const passkey = p256.getPublicKey(p256.utils.randomSecretKey(), true)
    const organization = {
      organizationData: {
        organizationId: 'tk-sub-1',
        name: 'dave',
        users: [
          {
            userId: 'u1',
            userName: 'dave',
            userEmail: 'dave@example.com',
            authenticators: [
              {
                credentialId: 'Y3JlZC1kYXZl',
                authenticatorName: 'MacBook',
                credential: { publicKey: bytesToHex(passkey) },
              },
            ],
            oauthProviders: [
              {
                providerName: 'google',
                issuer: 'https://accounts.google.com',
                audience: 'app',
                subject: 'g-dave',
              },
            ],
          },
        ],
        wallets: [{ walletId: 'w1', walletName: 'Default' }],
      },
    }
    const converted = [organization].map(fromTurnkey)
    expect(converted[0]!.needsUser).toEqual([
      expect.stringMatching(/^wallet Default: exported by the person/),
    ])
    const { rejected, exported } = await importAll(converted)
    expect(rejected).toEqual([])
    expect(byId(exported, 'turnkey:tk-sub-1')).toMatchObject({
      email: 'dave@example.com',
      passkeys: [
        expect.objectContaining({
          credentialId: 'Y3JlZC1kYXZl',
          cosePublicKey: converted[0]!.line.passkeys![0]!.cosePublicKey,
        }),
      ],
      oauthProviders: [expect.objectContaining({ subject: 'g-dave', audience: 'app' })],
    })
  })
})
