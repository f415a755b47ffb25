// After exports, imports (good and failing) and a bulk import on a durable
// SQLite data dir, neither the database file nor the service's log lines and events hold a
// mnemonic or private key in the clear.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hpkeOpen, hpkeSeal } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { english, generateMnemonic } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { setUnexpectedErrorLogger } from '../../src/kernel/base/ServiceLogger.ts'
import { openSignedBundle } from '../../src/kernel/crypto/index.ts'
import { openDataDir } from '../../src/kernel/store/durableStores.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
} from '../../src/testing/harness.ts'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function targetOf(h: Harness, importBundle: string): Uint8Array {
  return hexToBytes(
    openSignedBundle<{ targetPublic: string }>(importBundle, hexToBytes(h.service.dev.signerPublicKey))
      .targetPublic,
  )
}

async function opened(h: Harness, bundle: string, clientKey: Uint8Array): Promise<Uint8Array> {
  const data = openSignedBundle<{ encappedPublic: string; ciphertext: string }>(
    bundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  return hpkeOpen({
    ciphertext: data,
    receiverPublicKey: p256.getPublicKey(clientKey, false),
    dh: (sender) => p256.getSharedSecret(clientKey, sender, true).slice(1),
  })
}

describe('secrets at rest and in logs', () => {
  it('no mnemonic or private key reaches the database file, a log line or an event', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-at-rest-'))
    dirs.push(dir)
    const lines: string[] = []
    const capture = (level: string) => (fields: object, message?: string) => {
      lines.push(
        `${level} ${message ?? ''} ${JSON.stringify(fields, (_k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v))}`,
      )
    }
    const logger = {
      debug: capture('debug'),
      info: capture('info'),
      warn: capture('warn'),
      error: capture('error'),
      isLevelEnabled: () => true,
    }
    const previous = setUnexpectedErrorLogger(logger)
    const store = await openDataDir(dir)
    const masterKey = crypto.getRandomValues(new Uint8Array(32))
    const h = await createHarness({
      clock: fakeClock(),
      store,
      masterKey,
      logger,
      events: { emit: (name, data) => lines.push(`event ${name} ${JSON.stringify(data)}`) },
    })
    const step = () => h.clock.advance(1000)
    const secrets: string[] = []
    const publics: string[] = []
    try {
      const clientKey = p256.utils.randomSecretKey()
      const targetPublicKey = bytesToHex(p256.getPublicKey(clientKey, false))
      // A new wallet, exported (so the test knows its mnemonic and key).
      const made = resultOf(
        'create_wallet',
        await h.submit('create_wallet', { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] }),
      )
      step()
      const mnemonic = new TextDecoder().decode(
        await opened(
          h,
          resultOf(
            'export_wallet',
            await h.submit('export_wallet', { walletId: made.walletId, targetPublicKey }),
          ).exportBundle,
          clientKey,
        ),
      )
      step()
      const accountKey = bytesToHex(
        await opened(
          h,
          resultOf(
            'export_wallet_account',
            await h.submit('export_wallet_account', { address: made.addresses[0], targetPublicKey }),
          ).exportBundle,
          clientKey,
        ),
      )
      secrets.push(mnemonic, accountKey)
      publics.push(made.addresses[0], made.walletId)

      // An imported wallet and key, then failing imports of secrets that do not fit.
      const userId = h.service.dev.userId
      const importedMnemonic = generateMnemonic(english)
      const importedKey = bytesToHex(crypto.getRandomValues(new Uint8Array(32)))
      const badKey = 'ff'.repeat(32) // past secp256k1's order
      const shortMnemonic = generateMnemonic(english).split(' ').slice(0, 11).join(' ')
      secrets.push(importedMnemonic, importedKey, badKey, shortMnemonic)
      step()
      let init = resultOf('init_import_wallet', await h.submit('init_import_wallet', { userId }))
      step()
      const failedWallet = await h.submit('import_wallet', {
        userId,
        walletName: 'bad',
        encryptedBundle: JSON.stringify(
          hpkeSeal({
            plaintext: utf8ToBytes(shortMnemonic),
            receiverPublicKey: targetOf(h, init.importBundle),
          }),
        ),
        accounts: [ETHEREUM_ACCOUNT],
      })
      expect(failedWallet.status).toBe(400)
      step()
      init = resultOf('init_import_wallet', await h.submit('init_import_wallet', { userId }))
      step()
      resultOf(
        'import_wallet',
        await h.submit('import_wallet', {
          userId,
          walletName: 'I',
          encryptedBundle: JSON.stringify(
            hpkeSeal({
              plaintext: utf8ToBytes(importedMnemonic),
              receiverPublicKey: targetOf(h, init.importBundle),
            }),
          ),
          accounts: [ETHEREUM_ACCOUNT],
        }),
      )
      for (const key of [badKey, importedKey]) {
        step()
        init = resultOf('init_import_private_key', await h.submit('init_import_private_key', { userId }))
        step()
        const reply = await h.submit('import_private_key', {
          userId,
          privateKeyName: `k${key.slice(0, 4)}`,
          curve: 'CURVE_SECP256K1',
          addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
          encryptedBundle: JSON.stringify(
            hpkeSeal({ plaintext: hexToBytes(key), receiverPublicKey: targetOf(h, init.importBundle) }),
          ),
        })
        expect(reply.status).toBe(key === badKey ? 400 : 200)
      }
      // A bulk import line with a wallet, and one whose addresses do not match.
      step()
      const importKey = targetOf(
        h,
        resultOf('latchkey_init_user_import', await h.submit('latchkey_init_user_import', {})).importBundle,
      )
      const bulkMnemonic = generateMnemonic(english)
      secrets.push(bulkMnemonic)
      for (const [externalId, addresses] of [
        ['bulk-bad', ['0x0000000000000000000000000000000000000001']],
        ['bulk-ok', undefined],
      ] as const) {
        step()
        const reply = await h.submit('latchkey_import_user', {
          externalId,
          wallets: [
            {
              walletName: 'B',
              encryptedBundle: JSON.stringify(
                hpkeSeal({ plaintext: utf8ToBytes(bulkMnemonic), receiverPublicKey: importKey }),
              ),
              accounts: [ETHEREUM_ACCOUNT],
            },
          ],
          ...(addresses ? { addresses } : {}),
        })
        expect(reply.status).toBe(addresses ? 400 : 200)
      }
    } finally {
      await h.service.close()
      setUnexpectedErrorLogger(previous)
    }

    // What each secret looks like where it could be written: the text, its hex, 3 words in a row.
    const needles = secrets.flatMap((secret) =>
      secret.includes(' ')
        ? [secret, bytesToHex(utf8ToBytes(secret)), secret.split(' ').slice(2, 5).join(' ')]
        : [secret, Buffer.from(hexToBytes(secret)).toString('base64')],
    )
    const files = readdirSync(dir).filter((name) => name.startsWith('latchkey.sqlite'))
    expect(files.length).toBeGreaterThan(0)
    const bytes = Buffer.concat(files.map((name) => readFileSync(join(dir, name))))
    const found = needles.filter(
      (needle) => bytes.includes(Buffer.from(needle)) || bytes.includes(Buffer.from(needle.toUpperCase())),
    )
    // Control: the scan reads what the service wrote (public values are found).
    expect(publics.filter((value) => !bytes.includes(Buffer.from(value)))).toEqual([])
    expect(found, 'secrets found in the database files').toEqual([])
    const logged = lines.join('\n')
    expect(lines.length).toBeGreaterThan(5)
    expect(
      needles.filter((needle) => logged.toLowerCase().includes(needle.toLowerCase())),
      'secrets in logs',
    ).toEqual([])
  })
})
