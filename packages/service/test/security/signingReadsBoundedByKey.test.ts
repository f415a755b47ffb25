// Cost and bound of judging a signing by its key (policies/policySignersOf.ts): the accounts holding
// the key are found through the address index, by the key's address in each format of its curve,
// a page of a few rows each, never by reading the wallet. Before, every policy evaluation of a
// signing (the decision, the MFA gate, a session profile's scope) read every account of the
// signer's wallet (an organization holds up to 100,000): 100,001 accounts, 100,011 rows and
// 674 ms a sign_transaction. A key held by more accounts than are judged (the same seed imported
// into many wallets), or an address of more rows than a page, is refused with a 403 saying so,
// rather than judged by some of them.
import { hexToBytes } from '@noble/hashes/utils.js'
import { serializeTransaction } from 'viem'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { addressFromPublicKey } from '../../src/kernel/crypto/addresses.ts'
import type { WalletAccountRow } from '../../src/kernel/store/model.ts'
import { HOLDER_ROWS, MAX_HOLDERS } from '../../src/policies/policySignersOf.ts'
import { ETHEREUM_ACCOUNT, resultOf } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'
import { countRowsRead } from './rowsRead.ts'

const tx = (nonce: number) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 1,
    nonce,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
    gas: 21000n,
    to: '0x3333333333333333333333333333333333333333',
    value: 1n,
  })

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('')

afterEach(() => vi.restoreAllMocks())

describe('a signing policy evaluation on a wallet of many accounts', () => {
  it('reads a bounded number of rows however many accounts the wallet holds', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const [signer] = t.sub.addresses as [string]
    await t.allowSigning()
    const walletId = (await t.h.service.store.findBy('walletAccounts', 'address', signer))[0]!.walletId
    const sign = async (nonce: number) => {
      t.h.clock.advance(1)
      const counter = countRowsRead()
      const started = performance.now()
      const response = await t.h.submit(
        'sign_transaction',
        { signWith: signer, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(nonce) },
        t.asBackend,
      )
      const ms = performance.now() - started
      const rows = await counter.rows()
      vi.restoreAllMocks()
      expect(response.status).toBe(200)
      return { rows, ms }
    }
    const small = await sign(0)

    // Genuine accounts, as the end user (root of their wallet) adds them: 2 x 100.
    for (let batch = 0; batch < 2; batch++) {
      t.h.clock.advance(1)
      resultOf(
        'create_wallet_accounts',
        await t.h.submit(
          'create_wallet_accounts',
          {
            walletId,
            accounts: Array.from({ length: 100 }, (_, i) => ({
              ...ETHEREUM_ACCOUNT,
              path: `m/44'/60'/0'/0/${1 + batch * 100 + i}`,
            })),
          },
          t.asRoot,
        ),
      )
    }
    const genuine = await sign(1)

    // The rest up to 20,000 written directly (as 200 more create_wallet_accounts would: the
    // organization may hold 100,000), other keys of the same wallet.
    const template = (await t.h.service.store.findBy('walletAccounts', 'address', signer))[0]!
    const rows = Array.from({ length: 19_800 }, (_, i) => ({
      ...template,
      id: `other-key-${i}`,
      path: `m/44'/60'/1'/0/${i}`,
      address: `0x${hex(20)}`,
      publicKey: `02${hex(32)}`,
    }))
    for (let i = 0; i < rows.length; i += 2_000)
      await t.h.service.store.transaction(async (w) => {
        for (const row of rows.slice(i, i + 2_000)) await w.put('walletAccounts', row)
      })
    expect(await t.h.service.store.findBy('walletAccounts', 'walletId', walletId)).toHaveLength(20_001)
    const large = await sign(2)
    // A signing reads about as many rows with 20,000 accounts in the wallet as with one.
    expect({ genuine: genuine.rows < small.rows + 100, large: large.rows < small.rows + 100 }).toEqual({
      genuine: true,
      large: true,
    })
    await t.h.service.close()
  }, 300_000)

  /** The signer's key held by `count` more accounts, written as `holder(i)` makes them. */
  async function heldBy(
    t: Awaited<ReturnType<typeof delegated>>,
    signer: string,
    count: number,
    holder: (i: number) => {
      id: string
      walletId?: string
      organizationId?: string
      address?: string
      addressFormat?: WalletAccountRow['addressFormat']
    },
  ) {
    const template = (await t.h.service.store.findBy('walletAccounts', 'address', signer))[0]!
    await t.h.service.store.transaction(async (w) => {
      for (let i = 0; i < count; i++) await w.put('walletAccounts', { ...template, ...holder(i) })
    })
  }

  const signAs = (t: Awaited<ReturnType<typeof delegated>>, signer: string, nonce: number) => {
    t.h.clock.advance(1)
    return t.h.submit(
      'sign_transaction',
      { signWith: signer, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(nonce) },
      t.asBackend,
    )
  }

  it(`a key held by more than ${MAX_HOLDERS} accounts of the organization is refused, with a 403 saying why`, async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const [signer] = t.sub.addresses as [string]
    await t.allowSigning()
    // The same seed in other wallets of the organization, in two formats (so that no address has
    // more rows than a page): up to the bound, judged in each.
    const { publicKey } = (await t.h.service.store.findBy('walletAccounts', 'address', signer))[0]!
    const compressed = addressFromPublicKey('ADDRESS_FORMAT_COMPRESSED', hexToBytes(publicKey))
    const inFormat = (i: number) =>
      i % 2 === 0 ? {} : { address: compressed, addressFormat: 'ADDRESS_FORMAT_COMPRESSED' as const }
    await heldBy(t, signer, MAX_HOLDERS - 1, (i) => ({
      id: `held-${i}`,
      walletId: `wallet-${i >> 1}`,
      ...inFormat(i),
    }))
    expect((await signAs(t, signer, 0)).status).toBe(200)
    await heldBy(t, signer, 1, () => ({ id: 'held-past', walletId: 'wallet-past' }))
    const refused = await signAs(t, signer, 1)
    expect({ status: refused.status, code: refused.body.details?.errorCode }).toEqual({
      status: 403,
      code: 'PERMISSION_DENIED',
    })
    expect(refused.body.message).toMatch(`held by more than ${MAX_HOLDERS} accounts`)
    await t.h.service.close()
  })

  it(`an address of the key with more than ${HOLDER_ROWS} accounts anywhere is refused rather than judged by a page`, async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const [signer] = t.sub.addresses as [string]
    await t.allowSigning()
    // The same secret in other organizations: a page of the address index holds them too.
    await heldBy(t, signer, HOLDER_ROWS - 1, (i) => ({
      id: `elsewhere-${i}`,
      organizationId: `other-org-${i}`,
    }))
    expect((await signAs(t, signer, 0)).status).toBe(200)
    await heldBy(t, signer, 1, () => ({ id: 'elsewhere-past', organizationId: 'other-org-past' }))
    const refused = await signAs(t, signer, 1)
    expect({ status: refused.status, code: refused.body.details?.errorCode }).toEqual({
      status: 403,
      code: 'PERMISSION_DENIED',
    })
    expect(refused.body.message).toMatch(`more than ${HOLDER_ROWS} accounts of one address`)
    await t.h.service.close()
  })

  it('a wallet holds one key once per format, however its path is spelt', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const [signer] = t.sub.addresses as [string]
    const walletId = (await t.h.service.store.findBy('walletAccounts', 'address', signer))[0]!.walletId
    const add = (path: string, addressFormat = ETHEREUM_ACCOUNT.addressFormat) => {
      t.h.clock.advance(1)
      return t.h.submit(
        'create_wallet_accounts',
        { walletId, accounts: [{ ...ETHEREUM_ACCOUNT, path, addressFormat }] },
        t.asRoot,
      )
    }
    expect(ETHEREUM_ACCOUNT.path).toBe("m/44'/60'/0'/0/0")
    for (const path of ['m/44h/60h/0h/0/0', "M/44'/60H/0'/0/0", "m/0044'/60'/00'/0/000"]) {
      const again = await add(path)
      expect({ path, status: again.status, code: again.body.details?.errorCode }).toEqual({
        path,
        status: 409,
        code: 'ALREADY_EXISTS',
      })
    }
    // Another format of the key, or another path, is another account.
    expect((await add('m/44h/60h/0h/0/0', 'ADDRESS_FORMAT_COMPRESSED')).status).toBe(200)
    expect((await add("m/44'/60'/0'/0/1")).status).toBe(200)
    expect(await t.h.service.store.findBy('walletAccounts', 'walletId', walletId)).toHaveLength(3)
    await t.h.service.close()
  })
})

// A signing names its account by address, and hex addresses match in any case (`findAccount`). A
// spelling other than the stored one (an EVM address in lower case, where it is stored
// checksummed) was found by reading every account of the organization, which an end user can fill
// with 100,000 (`create_wallet_accounts`, 100 a call): each such signing read them all. It is now
// found through the address index by the spellings an address is stored in.
describe('an account named in another case', () => {
  it('is found through the address index, however many accounts the organization holds', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const [signer] = t.sub.addresses as [string]
    expect(signer).not.toBe(signer.toLowerCase())
    const sign = async (signWith: string, nonce: number) => {
      t.h.clock.advance(1)
      const counter = countRowsRead()
      const response = await t.h.submit(
        'sign_transaction',
        { signWith, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(nonce) },
        t.asRoot,
      )
      const rows = await counter.rows()
      vi.restoreAllMocks()
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(200)
      return rows
    }
    const asStored = await sign(signer, 0)
    const template = (await t.h.service.store.findBy('walletAccounts', 'address', signer))[0]!
    // 5,000 other accounts of the organization (as 50 create_wallet_accounts would make them).
    const rows = Array.from({ length: 5_000 }, (_, i) => ({
      ...template,
      id: `other-${i}`,
      path: `m/44'/60'/1'/0/${i}`,
      address: `0x${hex(20)}`,
      publicKey: `02${hex(32)}`,
    }))
    await t.h.service.store.transaction(async (w) => {
      for (const row of rows) await w.put('walletAccounts', row)
    })
    const lower = await sign(signer.toLowerCase(), 1)
    const upper = await sign(`0x${signer.slice(2).toUpperCase()}`, 2)
    expect({ lower: lower < asStored + 50, upper: upper < asStored + 50 }).toEqual({
      lower: true,
      upper: true,
    })
    await t.h.service.close()
  }, 120_000)
})
