// A DENY on `wallet` holds for delete_wallets (and create_wallet_accounts) as for signing with the
// wallet: the policy context once found `wallet` only for a signer, `export_wallet`'s walletId or
// `export_wallet_account`'s address, so for delete_wallets the keyword was absent, the DENY errored
// (OUTCOME_ERROR, skipped) and a broad ALLOW on the WALLET resource let a non-root back end destroy
// the very wallet the DENY protects. Several wallets are judged one scope each.
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

describe('a DENY on wallet.id and delete_wallets', () => {
  it('denies deleting the protected wallet, as it denies signing with it', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    await t.policy({
      policyName: 'back end manages wallets',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET'",
    })
    await t.policy({
      policyName: 'never the treasury',
      effect: 'EFFECT_DENY',
      condition: `wallet.id == '${t.sub.walletId}'`,
    })
    // Control: signing with the treasury is refused by the DENY.
    const sign = await t.h.submit(
      'sign_raw_payload',
      {
        signWith: t.sub.addresses![0],
        payload: 'ab'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      t.asBackend,
    )
    expect(sign.status).toBe(403)
    expect(sign.body.details.outcome).toBe('OUTCOME_DENY_EXPLICIT')

    // Attack: delete it.
    const reply = await t.h.submit(
      'delete_wallets',
      { walletIds: [t.sub.walletId], deleteWithoutExport: true },
      t.asBackend,
    )
    const left = await t.h.service.store.get('wallets', t.sub.walletId!)
    expect({ status: reply.status, outcome: reply.body.details?.outcome, walletStillThere: !!left }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_EXPLICIT',
      walletStillThere: true,
    })
    await t.h.service.close()
  })
})
