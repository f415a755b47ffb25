// What one request may make the service derive. Each non-hardened level of a secp256k1 path is a
// point multiplication on the thread that derives it: with paths of 127 levels, 40 accounts of one
// create_wallet_accounts (persist: false, so repeatable) or of an anonymous wallet sign-up held
// the service for 3.5 s, and every other tenant's request waited. A path has at most 16 levels,
// and the accounts of one request at most 300 non-hardened levels in all.
import { describe, expect, it } from 'vitest'
import { MAX_UNHARDENED_LEVELS } from '../domain/params.ts'
import { MAX_PATH_DEPTH } from '../kernel/crypto/path.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf, SOLANA_ACCOUNT, testKey } from '../testing/harness.ts'

const account = (path: string) => ({ ...ETHEREUM_ACCOUNT, path })

describe('the derivation one request may ask for', () => {
  it('refuses a path deeper than 16 levels and more than 300 non-hardened levels in all; 100 BIP-44 accounts pass', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ wallet: { walletName: 'w', accounts: [] } })
    const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const derive = (accounts: object[]) =>
      h.submit('create_wallet_accounts', { walletId: sub.walletId, accounts, persist: false }, as)

    const deep = await derive([account(`m${'/0'.repeat(MAX_PATH_DEPTH + 1)}`)])
    expect(deep.status).toBe(400)
    expect(deep.body.details.field).toBe('parameters.accounts[0].path')
    expect(deep.body.message).toContain(`deeper than ${MAX_PATH_DEPTH} levels`)

    // 100 accounts of 4 non-hardened levels each: 400, over the 300 a request may have.
    const many = await derive(Array.from({ length: 100 }, (_, i) => account(`m/0/0/0/${i}`)))
    expect(many.status).toBe(400)
    expect(many.body.details.field).toBe('parameters.accounts')
    expect(many.body.message).toContain(`400 non-hardened levels in all, more than ${MAX_UNHARDENED_LEVELS}`)

    // Controls: a path of 16 levels; 100 BIP-44 accounts (two non-hardened levels each); Solana's
    // paths are hardened at every level and cost no point multiplication.
    expect(
      resultOf('create_wallet_accounts', await derive([account(`m${'/0'.repeat(16)}`)])).addresses,
    ).toHaveLength(1)
    const bip44 = Array.from({ length: 100 }, (_, i) => account(`m/44'/60'/0'/0/${i}`))
    expect(resultOf('create_wallet_accounts', await derive(bip44)).addresses).toHaveLength(100)
    const solana = Array.from({ length: 100 }, (_, i) => ({
      ...SOLANA_ACCOUNT,
      path: `m/44'/501'/${i}'/0'/0'/0'`,
    }))
    expect(resultOf('create_wallet_accounts', await derive(solana)).addresses).toHaveLength(100)
  })

  it('refuses the same in an anonymous wallet sign-up through the auth proxy, before deriving anything', async () => {
    const h = await createHarness()
    const configId = h.service.dev.authProxyConfigId!
    const signUp = async (accounts: object[]) => {
      const res = await h.service.app.request('/v1/signup', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Auth-Proxy-Config-Id': configId,
          Origin: 'http://app.test',
        },
        body: JSON.stringify({
          userName: 'x',
          apiKeys: [testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191').apiKey('Wallet')],
          wallet: { walletName: 'Main', accounts, mnemonicLength: 12 },
        }),
      })
      return { status: res.status, body: await res.text() }
    }
    const deep = await signUp(Array.from({ length: 40 }, (_, i) => account(`m${'/0'.repeat(126)}/${i}`)))
    expect(deep.status, deep.body).toBe(400)
    expect(deep.body).toContain(`deeper than ${MAX_PATH_DEPTH} levels`)
    // Control: the same sign-up with one BIP-44 account makes the account.
    const normal = await signUp([account("m/44'/60'/0'/0/0")])
    expect(normal.status, normal.body).toBe(200)
  })
})
