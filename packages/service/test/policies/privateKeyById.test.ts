// `sign_transaction` takes a private key by its id or by its address (`privateKeySigner`); the
// policies read `eth.tx.from` as the key's address either way. Named by its id, `from` was once the
// id itself, so a DENY on the key's address no longer matched and a broad ALLOW signed.
import { serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, resultOf } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

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

describe('a private key named by its id', () => {
  it('is still judged by its address: a DENY on eth.tx.from refuses it', async () => {
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
              addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
            },
          ],
        },
        t.asRoot,
      ),
    ).privateKeys[0]
    const treasury = created.addresses[0].address as string
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
    // Control: named by its address, the DENY applies.
    const byAddress = await sign(treasury, 0)
    expect(byAddress.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    // The same key named by its id.
    const byId = await sign(created.privateKeyId, 1)
    expect({
      status: byId.status,
      signed: byId.body.activity?.result?.signTransactionResult?.signedTransaction !== undefined,
    }).toEqual({ status: 403, signed: false })
    await t.h.service.close()
  })
})
