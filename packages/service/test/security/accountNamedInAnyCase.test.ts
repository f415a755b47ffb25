// A signing names its account by address, and hex addresses match in any case (`findAccount`). A
// spelling other than the stored one (an EVM address in lower case, where it is stored
// checksummed) was found by reading every account of the organization, which an end user can fill
// with 100,000 (`create_wallet_accounts`, 100 a call): each such signing read them all. It is now
// found through the address index by the spellings an address is stored in.
import { serializeTransaction } from 'viem'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
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
