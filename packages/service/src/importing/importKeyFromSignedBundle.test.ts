// `latchkey-service import` encrypts every plaintext "mnemonic"/"privateKey" of the operator's
// 0600 file to the import key named by `latchkey_init_user_import`'s answer. Whoever answers that
// one request (an http:// --url, a TLS-terminating proxy, a wrong host) would get them all, so the
// client takes the key only from a bundle signed by the service's signer key (the operator's
// --trusted-signer-public-key) naming the organization it asked for and the root key's user, as
// the kit's import_wallet does.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hpkeOpen } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { english, generateMnemonic } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createService, type Service } from '../assembly/createService.ts'
import { openSignedBundle, signBundle } from '../kernel/crypto/bundles.ts'
import { ETHEREUM_ACCOUNT } from '../testing/harness.ts'
import { bulkImport, type Rejection } from './bulkImport.ts'
import { type ImportClientOptions, importClient } from './importClient.ts'

const INIT = '/public/v1/submit/latchkey_init_user_import'
const IMPORT = '/public/v1/submit/latchkey_import_user'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-import-key-'))
let service: Service
beforeAll(async () => {
  service = await createService()
})
afterAll(async () => {
  await service?.close()
  rmSync(dir, { recursive: true, force: true })
})

type Fetch = NonNullable<ImportClientOptions['fetch']>

/** The client as the command builds it, over `fetch` (the service's own unless given). */
function client(options: { fetch?: Fetch; trusted?: Uint8Array | null } = {}) {
  return importClient({
    url: 'http://service.test',
    organizationId: service.dev.organizationId,
    privateKey: hexToBytes(service.dev.apiPrivateKey),
    ...(options.trusted === null
      ? {}
      : { trustedSignerPublicKey: options.trusted ?? hexToBytes(service.dev.signerPublicKey) }),
    fetch: options.fetch ?? ((input, init) => service.fetch(input, init)),
  })
}

/**
 * Something between the client and the service: forwards everything, but answers
 * `latchkey_init_user_import` with the bundle `forge` makes for a key of its own, and on the way to
 * the service opens each wallet bundle with that key and keeps the plaintext.
 */
function inTheMiddle(
  forge: (targetPublic: string, genuine: { organizationId: string; userId: string }) => string,
) {
  const key = p256.utils.randomSecretKey()
  const stolen: string[] = []
  const fetch: Fetch = async (input, init) => {
    const url = String(input)
    if (url.endsWith(INIT)) {
      const response = await service.fetch(input, init)
      const body = (await response.json()) as {
        activity: { result: { latchkeyInitUserImportResult: { importBundle: string } } }
      }
      const result = body.activity.result.latchkeyInitUserImportResult
      const genuine = openSignedBundle<{ organizationId: string; userId: string }>(
        result.importBundle,
        hexToBytes(service.dev.signerPublicKey),
      )
      result.importBundle = forge(bytesToHex(p256.getPublicKey(key, false)), genuine)
      return new Response(JSON.stringify(body), { status: 200 })
    }
    if (url.endsWith(IMPORT)) {
      const payload = JSON.parse(String(init.body)) as {
        parameters: { wallets?: { encryptedBundle: string }[] }
      }
      for (const wallet of payload.parameters.wallets ?? []) {
        try {
          const plaintext = await hpkeOpen({
            ciphertext: JSON.parse(wallet.encryptedBundle),
            receiverPublicKey: p256.getPublicKey(key, false),
            dh: (sender) => p256.getSharedSecret(key, sender, true).slice(1),
          })
          stolen.push(new TextDecoder().decode(plaintext))
        } catch {}
      }
    }
    return service.fetch(input, init)
  }
  return { fetch, stolen }
}

/** Signed by a key of the one in the middle, naming another organization. */
const ownSigner = (targetPublic: string) =>
  signBundle(
    { organizationId: 'some-other-organization', userId: 'someone', targetPublic },
    p256.utils.randomSecretKey(),
  )

/** Signed by the service's own signer (a bundle it signed for someone else), with `changes`. */
const serviceSigned =
  (changes: { organizationId?: string; userId?: string }) =>
  (targetPublic: string, genuine: { organizationId: string; userId: string }) => {
    const signer = service.runtime.signerPrivateKey()
    try {
      return signBundle({ ...genuine, ...changes, targetPublic }, signer)
    } finally {
      signer.fill(0)
    }
  }

describe('the bulk import takes the import key only from a bundle the service signed for this organization and its root', () => {
  it('takes the genuine key, and refuses a bundle signed by another key, naming another organization or another user', async () => {
    // Control: the service's own answer verifies and names this organization and the root key's user.
    const key = await client().importKey()
    const stored = await service.store.get('importKeys', service.dev.organizationId)
    expect(bytesToHex(key)).toBe(stored?.publicKey)

    await expect(client({ fetch: inTheMiddle(ownSigner).fetch }).importKey()).rejects.toThrow(
      /does not verify against the trusted signer key/,
    )
    // Trusting the wrong signer key refuses the genuine answer too.
    await expect(
      client({ trusted: p256.getPublicKey(p256.utils.randomSecretKey(), false) }).importKey(),
    ).rejects.toThrow(/does not verify against the trusted signer key/)
    await expect(
      client({
        fetch: inTheMiddle(serviceSigned({ organizationId: 'another-organization' })).fetch,
      }).importKey(),
    ).rejects.toThrow(/names organization "another-organization"/)
    await expect(
      client({ fetch: inTheMiddle(serviceSigned({ userId: 'another-user' })).fetch }).importKey(),
    ).rejects.toThrow(/names user "another-user", not the root key's user/)
    // No trusted key given: nothing is taken at all.
    await expect(client({ trusted: null }).importKey()).rejects.toThrow(/pass trustedSignerPublicKey/)
  })

  it('a bulk import through someone answering with their own key encrypts no mnemonic to it and rejects the line', async () => {
    const mnemonic = generateMnemonic(english)
    const path = join(dir, 'users.jsonl')
    writeFileSync(
      path,
      `${JSON.stringify({
        externalId: 'privy:someone',
        email: 'someone@example.com',
        wallets: [{ walletName: 'Main', mnemonic, accounts: [ETHEREUM_ACCOUNT] }],
      })}\n`,
    )
    chmodSync(path, 0o600)
    const middle = inTheMiddle(ownSigner)
    const through = client({ fetch: middle.fetch })
    const rejected: Rejection[] = []
    const totals = await bulkImport({
      file: path,
      submit: (params) => through.importUser(params),
      importKey: () => through.importKey(),
      alreadyImported: (ids) => through.importedAmong(ids),
      onRejected: (r) => rejected.push(r),
    })
    expect(middle.stolen).toEqual([])
    expect(totals).toMatchObject({ read: 1, imported: 0, rejected: 1 })
    expect(rejected[0]?.line).toBe(1)
    expect(rejected[0]?.reason).toMatch(/does not verify against the trusted signer key/)
  })
})
