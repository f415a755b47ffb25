// The kit's `importWallet` seals the mnemonic to the key of the signed bundle `init_import_wallet`
// answers, once it names the organization and the user. The service also signs such a bundle for
// the organization's import key (`latchkey_init_user_import`: a root user of a top-level
// organization), whose ciphertexts `latchkey_import_user` opens into new accounts; that one names a
// purpose, and the kit refuses any bundle that does, before sealing anything to it.

import { resultOf } from '@latchkey/service/testing'
import { english, generateMnemonic } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { addSessionFromKey } from '../../session/sessions.ts'
import { createClientFixture } from '../../test/fixtures.ts'
import { importWallet } from './importWallet.ts'

describe("importWallet seals only to a user's import target", () => {
  it("refuses the organization import key's bundle, naming this organization and this user, and sends nothing", async () => {
    const fx = await createClientFixture()
    const h = fx.harness
    const organizationKey = resultOf(
      'latchkey_init_user_import',
      await h.submit('latchkey_init_user_import', {}),
    ).importBundle as string
    // Answers init_import_wallet with the organization import key's bundle while `swap` is set
    // (as whoever sits between the page and the service could), and counts the imports sent.
    let swap = true
    const sent: string[] = []
    const client = fx.reload({
      fetch: async (input, init) => {
        const url = String(input)
        if (url.endsWith('/public/v1/submit/import_wallet')) sent.push(String(init?.body))
        const response = await h.service.fetch(input as string, init as RequestInit)
        if (!swap || !url.endsWith('/public/v1/submit/init_import_wallet')) return response
        const body = (await response.json()) as {
          activity: { result: { initImportWalletResult: { importBundle: string } } }
        }
        body.activity.result.initImportWalletResult.importBundle = organizationKey
        return new Response(JSON.stringify(body), { status: 200 })
      },
    })
    // A session of the organization's root user (the user the import key's bundle names).
    await client.hydrate()
    const key = await client.keyStore.create({ scope: client.config.organizationId })
    resultOf(
      'create_api_keys',
      await h.submit('create_api_keys', {
        userId: h.service.dev.userId,
        apiKeys: [{ apiKeyName: 'kit', publicKey: key.publicKey, curveType: 'API_KEY_CURVE_P256' }],
      }),
    )
    addSessionFromKey(client, {
      publicKey: key.publicKey,
      userId: h.service.dev.userId,
      organizationId: h.organizationId,
      lifetimeSeconds: 900,
      method: 'api-key',
    })
    const mnemonic = generateMnemonic(english)
    await expect(
      importWallet(client, { mnemonic, walletName: 'Mine', chains: ['ethereum'] }),
    ).rejects.toMatchObject({
      code: 'BUNDLE_MISMATCH',
      details: { field: 'purpose' },
    })
    expect(sent).toEqual([])

    // Control: the service's own answer, a target of this user, imports.
    swap = false
    const imported = await importWallet(client, { mnemonic, walletName: 'Mine', chains: ['ethereum'] })
    expect(imported.addresses).toHaveLength(1)
    expect(sent).toHaveLength(1)
  })
})
