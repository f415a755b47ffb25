// The policies, a session profile's scope and the MFA conditions judge the wallet an activity
// acts on by the parameter its handler reads (policies/policySubject.ts): `from` of
// eth_send_transaction (sendJudgedByItsSender.test.ts), `signWiths` of sol_send_transaction V2,
// `address` of export_wallet_account, `walletId(s)` of export_wallet, create_wallet_accounts and
// delete_wallets. They once took `wallet` from an intent's `signWith` first, for every activity:
// the handlers above never read it, and the stored intent keeps every field sent, so a caller who
// added `signWith: <a wallet they may use>` was judged on that wallet while the handler acted on
// another (the treasury exported, deleted, or signing a Solana send).

import type { Address } from '@solana/kit'
import { createNoopSigner } from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, resultOf, SOLANA_ACCOUNT, testKey } from '../../src/testing/harness.ts'
import { delegated, profiledSession } from '../policies/delegated.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'

async function twoWallets() {
  const t = await delegated([ETHEREUM_ACCOUNT])
  t.h.clock.advance(1)
  const spending = resultOf(
    'create_wallet',
    await t.h.submit('create_wallet', { walletName: 'Spending', accounts: [ETHEREUM_ACCOUNT] }, t.asRoot),
  )
  return {
    ...t,
    treasury: { walletId: t.sub.walletId!, address: t.sub.addresses![0]! },
    spending: { walletId: spending.walletId as string, address: spending.addresses[0] as string },
  }
}

describe('the wallet an activity is judged on, with an unread signWith added', () => {
  it('a back end allowed to manage (and export) only the spending wallet cannot export the treasury', async () => {
    const t = await twoWallets()
    await t.policy({
      policyName: 'back end manages the spending wallet',
      effect: 'EFFECT_ALLOW',
      condition: `activity.resource == 'WALLET' && wallet.id == '${t.spending.walletId}'`,
    })
    const target = testKey().publicKey
    // Control: exporting the treasury is refused (no policy allows it).
    t.h.clock.advance(1)
    const control = await t.h.submit(
      'export_wallet',
      { walletId: t.treasury.walletId, targetPublicKey: target },
      t.asBackend,
    )
    expect(control.status).toBe(403)
    // Attack: the same export with the spending wallet's address added as `signWith`.
    t.h.clock.advance(1)
    const attack = await t.h.submit(
      'export_wallet',
      { walletId: t.treasury.walletId, targetPublicKey: target, signWith: t.spending.address },
      t.asBackend,
    )
    const exported = (await t.h.service.store.get('wallets', t.treasury.walletId))?.exported
    expect({
      status: attack.status,
      exportedWallet: attack.body.activity?.result?.exportWalletResult?.walletId,
      treasuryMarkedExported: exported,
    }).toEqual({ status: 403, exportedWallet: undefined, treasuryMarkedExported: false })
    await t.h.service.close()
  })

  it('a DENY on the treasury wallet holds for export_wallet_account with an added signWith', async () => {
    const t = await twoWallets()
    await t.policy({
      policyName: 'back end manages wallets',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET'",
    })
    await t.policy({
      policyName: 'never the treasury',
      effect: 'EFFECT_DENY',
      condition: `wallet.id == '${t.treasury.walletId}'`,
    })
    const target = testKey().publicKey
    t.h.clock.advance(1)
    const control = await t.h.submit(
      'export_wallet_account',
      { address: t.treasury.address, targetPublicKey: target },
      t.asBackend,
    )
    expect(control.status).toBe(403)
    expect(control.body.details.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    t.h.clock.advance(1)
    const attack = await t.h.submit(
      'export_wallet_account',
      { address: t.treasury.address, targetPublicKey: target, signWith: t.spending.address },
      t.asBackend,
    )
    expect({ status: attack.status, outcome: attack.body.details?.outcome }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_EXPLICIT',
    })
    await t.h.service.close()
  })

  it('a session confined to the spending wallet cannot delete the treasury', async () => {
    const t = await twoWallets()
    const session = await profiledSession(t.h, {
      owner: t.asRoot,
      as: t.asRoot,
      scope: `activity.resource == 'WALLET' && wallet.id == '${t.spending.walletId}'`,
    })
    const asSession = { ...t.at, as: session }
    // Control: named plainly, the scope refuses it.
    t.h.clock.advance(1)
    const control = await t.h.submit(
      'delete_wallets',
      { walletIds: [t.treasury.walletId], deleteWithoutExport: true },
      asSession,
    )
    expect(control.status).toBe(403)
    expect(control.body.details?.errorCode).toBe('SESSION_SCOPE_DENIED')
    // Attack: the spending wallet's address as an extra `signWith`.
    t.h.clock.advance(1)
    const attack = await t.h.submit(
      'delete_wallets',
      { walletIds: [t.treasury.walletId], deleteWithoutExport: true, signWith: t.spending.address },
      asSession,
    )
    const left = await t.h.service.store.get('wallets', t.treasury.walletId)
    expect({ status: attack.status, treasuryStillThere: !!left }).toEqual({
      status: 403,
      treasuryStillThere: true,
    })
    await t.h.service.close()
  })

  it('a session confined to the spending wallet cannot add accounts to the treasury', async () => {
    const t = await twoWallets()
    const session = await profiledSession(t.h, {
      owner: t.asRoot,
      as: t.asRoot,
      scope: `activity.resource == 'WALLET' && wallet.id == '${t.spending.walletId}'`,
    })
    const asSession = { ...t.at, as: session }
    const add = (extra: Record<string, unknown>) => {
      t.h.clock.advance(1)
      return t.h.submit(
        'create_wallet_accounts',
        {
          walletId: t.treasury.walletId,
          accounts: [{ ...ETHEREUM_ACCOUNT, path: "m/44'/60'/0'/0/7" }],
          ...extra,
        },
        asSession,
      )
    }
    const control = await add({})
    expect([control.status, control.body.details?.errorCode]).toEqual([403, 'SESSION_SCOPE_DENIED'])
    const attack = await add({ signWith: t.spending.address })
    const accounts = await t.h.service.store.findBy('walletAccounts', 'walletId', t.treasury.walletId)
    expect({
      status: attack.status,
      code: attack.body.details?.errorCode,
      accounts: accounts.length,
    }).toEqual({
      status: 403,
      code: 'SESSION_SCOPE_DENIED',
      accounts: 1,
    })
    await t.h.service.close()
  })

  it('a waiting activity recorded with an added signWith is judged on its walletId when voted on', async () => {
    const t = await twoWallets()
    const approver = testKey()
    const { userIds } = resultOf(
      'create_users',
      await t.h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'approver',
              apiKeys: [approver.apiKey('approver')],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        t.asRoot,
      ),
    )
    await t.policy({
      policyName: 'spending wallet, approved',
      effect: 'EFFECT_ALLOW',
      condition: `activity.resource == 'WALLET' && wallet.id == '${t.spending.walletId}'`,
      consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
    })
    const target = testKey().publicKey
    t.h.clock.advance(1)
    const waiting = await t.h.submit(
      'export_wallet',
      { walletId: t.spending.walletId, targetPublicKey: target },
      t.asBackend,
    )
    expect(waiting.body.activity?.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    // As an activity of the treasury with the spending wallet's `signWith` was recorded waiting
    // when `signWith` named the wallet judged.
    await t.h.service.store.transaction(async (tx) => {
      const row = await tx.get('activities', waiting.body.activity.id)
      await tx.put('activities', {
        ...row!,
        intent: { walletId: t.treasury.walletId, targetPublicKey: target, signWith: t.spending.address },
      })
    })
    t.h.clock.advance(1)
    const vote = await t.h.submit(
      'approve_activity',
      { fingerprint: waiting.body.activity.fingerprint },
      { ...t.at, as: approver },
    )
    expect(vote.status).toBe(200)
    const { body } = await t.h.query('get_activity', { activityId: waiting.body.activity.id }, t.asRoot)
    const treasury = await t.h.service.store.get('wallets', t.treasury.walletId)
    expect({ status: body.activity.status, treasuryExported: treasury?.exported }).toEqual({
      status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED',
      treasuryExported: false,
    })
    await t.h.service.close()
  })
})

const SOLANA_CAIP2 = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'
const DEAD = 'GDDMwNyyx8uB6zrqwBFHjLLG3TBYk2F8Az4yrQC5RzMp' as Address

/** Two Solana wallets: the treasury (the sub-organization's) and a spending one. */
async function twoSolanaWallets() {
  const t = await delegated([SOLANA_ACCOUNT])
  t.h.clock.advance(1)
  const spending = resultOf(
    'create_wallet',
    await t.h.submit('create_wallet', { walletName: 'Spending', accounts: [SOLANA_ACCOUNT] }, t.asRoot),
  )
  const treasury = t.sub.addresses![0] as Address
  // The treasury pays: only its key signs the transaction.
  const tx = solanaTransaction(treasury, [
    getTransferSolInstruction({ source: createNoopSigner(treasury), destination: DEAD, amount: 10n ** 9n }),
  ])
  return {
    ...t,
    treasury: { walletId: t.sub.walletId!, address: treasury },
    spending: { walletId: spending.walletId as string, address: spending.addresses[0] as Address },
    tx,
  }
}

describe('a Solana send (V2) with signWiths and an unread signWith', () => {
  const send = (
    t: Awaited<ReturnType<typeof twoSolanaWallets>>,
    as: unknown,
    extra: Record<string, unknown>,
  ) => {
    t.h.clock.advance(1)
    return t.h.submit(
      'sol_send_transaction',
      { unsignedTransaction: t.tx, signWiths: [t.treasury.address], caip2: SOLANA_CAIP2, ...extra },
      { ...t.at, as, type: 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2' } as never,
    )
  }

  it('a DENY on the treasury holds for the treasury in signWiths', async () => {
    const t = await twoSolanaWallets()
    await t.policy({
      policyName: 'back end sends',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET' && activity.action == 'SEND'",
    })
    await t.policy({
      policyName: 'never the treasury',
      effect: 'EFFECT_DENY',
      condition: `wallet.id == '${t.treasury.walletId}'`,
    })
    const control = await send(t, t.asBackend.as, {})
    expect([control.status, control.body.details?.outcome]).toEqual([403, 'OUTCOME_DENY_EXPLICIT'])
    const attack = await send(t, t.asBackend.as, { signWith: t.spending.address })
    expect({ status: attack.status, outcome: attack.body.details?.outcome }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_EXPLICIT',
    })
    await t.h.service.close()
  })

  it('a session confined to the spending wallet cannot sign with the treasury', async () => {
    const t = await twoSolanaWallets()
    const session = await profiledSession(t.h, {
      owner: t.asRoot,
      as: t.asRoot,
      scope: `activity.action == 'SEND' && wallet.id == '${t.spending.walletId}'`,
    })
    const control = await send(t, session, {})
    expect([control.status, control.body.details?.errorCode]).toEqual([403, 'SESSION_SCOPE_DENIED'])
    const attack = await send(t, session, { signWith: t.spending.address })
    expect({ status: attack.status, code: attack.body.details?.errorCode }).toEqual({
      status: 403,
      code: 'SESSION_SCOPE_DENIED',
    })
    await t.h.service.close()
  })
})
