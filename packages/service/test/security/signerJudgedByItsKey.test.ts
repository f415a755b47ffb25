// `sign_transaction` signs with the KEY `signWith` names (`findSigner`: a wallet account by any of
// its addresses, a private key by its id or any of its addresses), and the chain sees that key's
// 0x address as the sender. The policies judge the same: `eth.tx.from` is the key's 0x address and
// every account of the wallet holding the key is a `wallet_account` judged (policies/
// policySignersOf.ts). Before, they read the address string named, so the same secp256k1 key under
// another address format (ADDRESS_FORMAT_COMPRESSED at the same path, or a private key's second
// address) slipped past a DENY on the sender's 0x address while the transaction was signed from it.
import { Transaction } from 'micro-eth-signer'
import { serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, resultOf } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'

const COMPRESSED = { ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_COMPRESSED' }

const tx = (nonce: number) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 1,
    nonce,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
    gas: 21000n,
    to: '0x3333333333333333333333333333333333333333',
    value: 10n ** 18n,
  })

const senderOf = (signed: string | undefined) =>
  signed === undefined ? undefined : Transaction.fromHex(signed).sender.toLowerCase()

describe('a signer named by another address format of its key', () => {
  it('a DENY on eth.tx.from holds when the wallet key is named by its compressed-format account', async () => {
    // The end user's wallet holds the Ethereum account and, at the same path, the same key's
    // compressed public key (a wallet with several formats; or one the back end added).
    const t = await delegated([ETHEREUM_ACCOUNT, COMPRESSED as never])
    const [treasury, compressed] = t.sub.addresses as [string, string]
    await t.allowSigning()
    await t.policy({
      policyName: 'back end never signs as the treasury',
      effect: 'EFFECT_DENY',
      condition: `activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' && eth.tx.from == '${treasury.toLowerCase()}'`,
    })
    const sign = (signWith: string, nonce: number) =>
      t.h.submit(
        'sign_transaction',
        { signWith, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(nonce) },
        t.asBackend,
      )
    const control = await sign(treasury, 0)
    expect(control.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    t.h.clock.advance(1)
    const attack = await sign(compressed, 1)
    const signed = attack.body.activity?.result?.signTransactionResult?.signedTransaction as
      | string
      | undefined
    expect({ status: attack.status, signedAsTreasury: senderOf(signed) === treasury.toLowerCase() }).toEqual({
      status: 403,
      signedAsTreasury: false,
    })
    await t.h.service.close()
  })

  it('a DENY on wallet_account.address holds for the same key named by another format', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT, COMPRESSED as never])
    const [treasury, compressed] = t.sub.addresses as [string, string]
    await t.allowSigning()
    await t.policy({
      policyName: 'back end never signs with the treasury account',
      effect: 'EFFECT_DENY',
      condition: `wallet_account.address == '${treasury.toLowerCase()}'`,
    })
    const sign = (signWith: string, nonce: number) =>
      t.h.submit(
        'sign_transaction',
        { signWith, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(nonce) },
        t.asBackend,
      )
    const control = await sign(treasury, 0)
    expect(control.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    t.h.clock.advance(1)
    const attack = await sign(compressed, 1)
    const signed = attack.body.activity?.result?.signTransactionResult?.signedTransaction as
      | string
      | undefined
    expect({ status: attack.status, signedAsTreasury: senderOf(signed) === treasury.toLowerCase() }).toEqual({
      status: 403,
      signedAsTreasury: false,
    })
    await t.h.service.close()
  })

  it('a DENY on eth.tx.from holds for a private key named by its second (compressed) address', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const created = resultOf(
      'create_private_keys',
      await t.h.submit(
        'create_private_keys',
        {
          privateKeys: [
            {
              privateKeyName: 'treasury',
              curve: 'CURVE_SECP256K1',
              privateKeyTags: [],
              addressFormats: ['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_COMPRESSED'],
            },
          ],
        },
        t.asRoot,
      ),
    ).privateKeys[0]
    const addresses = created.addresses as { format: string; address: string }[]
    const treasury = addresses.find((a) => a.format === 'ADDRESS_FORMAT_ETHEREUM')!.address
    const compressed = addresses.find((a) => a.format === 'ADDRESS_FORMAT_COMPRESSED')!.address
    await t.allowSigning()
    await t.policy({
      policyName: 'back end never signs as the treasury',
      effect: 'EFFECT_DENY',
      condition: `activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' && eth.tx.from == '${treasury.toLowerCase()}'`,
    })
    const sign = (signWith: string, nonce: number) =>
      t.h.submit(
        'sign_transaction',
        { signWith, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(nonce) },
        t.asBackend,
      )
    const control = await sign(treasury, 0)
    expect(control.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    t.h.clock.advance(1)
    const attack = await sign(compressed, 1)
    const signed = attack.body.activity?.result?.signTransactionResult?.signedTransaction as
      | string
      | undefined
    expect({ status: attack.status, signedAsTreasury: senderOf(signed) === treasury.toLowerCase() }).toEqual({
      status: 403,
      signedAsTreasury: false,
    })
    await t.h.service.close()
  })
})
