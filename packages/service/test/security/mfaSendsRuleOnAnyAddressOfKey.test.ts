// The kit's "sends above an amount need a passkey" MFA rule (src/components/mfa/rules.ts) holds a
// `sign_transaction` that calls the account itself with calldata (`SELF_CALL`:
// `eth.tx.to == eth.tx.from && eth.tx.data != '0x'`), since the kit's delegate runs any calls with
// any value for its own account (ERC-7821 `execute`). `eth.tx.from` is the signing key's 0x address
// however `signWith` names it: a stolen session that adds the same key's
// ADDRESS_FORMAT_COMPRESSED account (create_wallet_accounts: no MFA rule holds that) and signs the
// self-call naming it still waits for the second factor. Before, `from` was the string named (the
// public key's hex), `to == from` was false, and the self-call was signed as the treasury.

import { Transaction } from 'micro-eth-signer'
import { serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { sendsCondition } from '../../../../src/components/mfa/rules.ts'
import { ETHEREUM_ACCOUNT, resultOf } from '../../src/testing/harness.ts'
import { backEndSecondFactor, delegated } from '../policies/delegated.ts'

const ETH = 10n ** 18n

const selfCall = (account: `0x${string}`, nonce: number) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 1,
    nonce,
    maxFeePerGas: 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 8n,
    gas: 100_000n,
    to: account,
    value: 0n,
    // Any calldata (an ERC-7821 `execute` of the delegate in real life).
    data: '0xe9ae5c53000000000000000000000000000000000000000000000000000000000000000000',
  })

describe('the sends rule and a signer named by another address format', () => {
  it('holds a self-call with calldata whichever format of the key signWith names', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const h = t.h
    await t.policy({
      policyName: 'back end',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET'",
    })
    const { asBackend } = await backEndSecondFactor(h, t, [
      { name: 'latchkey: sends above an amount need a passkey', condition: sendsCondition(ETH / 10n) },
    ])
    const treasury = t.sub.addresses![0] as `0x${string}`
    // Control: named by its Ethereum address, the self-call waits for the second factor.
    const control = await asBackend('sign_transaction', {
      signWith: treasury,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: selfCall(treasury, 0),
    })
    expect(control.body.activity?.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // The session adds the same key's compressed-format account (nothing holds that)...
    const added = resultOf(
      'create_wallet_accounts',
      await asBackend('create_wallet_accounts', {
        walletId: t.sub.walletId,
        accounts: [{ ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_COMPRESSED' }],
      }),
    )
    const compressed = added.addresses[0] as string
    // ...and signs the same self-call naming it.
    const attack = await asBackend('sign_transaction', {
      signWith: compressed,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: selfCall(treasury, 1),
    })
    const signed = attack.body.activity?.result?.signTransactionResult?.signedTransaction as
      | string
      | undefined
    expect({
      status: attack.body.activity?.status,
      signedAsTreasury:
        signed !== undefined && Transaction.fromHex(signed).sender.toLowerCase() === treasury.toLowerCase(),
    }).toEqual({ status: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED', signedAsTreasury: false })
    await h.service.close()
  })
})
