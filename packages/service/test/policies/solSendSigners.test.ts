// A DENY on `wallet` holds for every signer of a `sol_send_transaction`: with several `signWiths`
// each is judged in a scope of its own. Once only a single signer had `wallet`, so the treasury as
// the second signer left the DENY reading a missing keyword (OUTCOME_ERROR, skipped) and a broad
// ALLOW let the send through the decision.
import type { Address } from '@solana/kit'
import { createNoopSigner } from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { describe, expect, it } from 'vitest'
import { resultOf, SOLANA_ACCOUNT } from '../../src/testing/harness.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'
import { delegated } from './delegated.ts'

const CAIP2 = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'
const DEAD = 'GDDMwNyyx8uB6zrqwBFHjLLG3TBYk2F8Az4yrQC5RzMp' as Address

async function setup() {
  const { h, sub, at, asRoot, asBackend, policy } = await delegated([SOLANA_ACCOUNT])
  const backend = asBackend.as
  const spending = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: 'Spending', accounts: [SOLANA_ACCOUNT] }, asRoot),
  )
  await policy({
    policyName: 'Back end signs',
    effect: 'EFFECT_ALLOW',
    condition: "activity.resource == 'WALLET' && (activity.action == 'SIGN' || activity.action == 'SEND')",
  })
  await policy({
    policyName: 'Never the treasury',
    effect: 'EFFECT_DENY',
    condition: `wallet.id == '${sub.walletId}'`,
  })
  return {
    h,
    at,
    backend,
    treasury: sub.addresses![0] as Address,
    spending: spending.addresses[0] as Address,
  }
}

const send = (t: Awaited<ReturnType<typeof setup>>, signWiths: string[], tx: string) =>
  t.h.submit(
    'sol_send_transaction',
    { unsignedTransaction: tx, signWiths, caip2: CAIP2 },
    { ...t.at, as: t.backend },
  )

describe('a DENY on wallet and a Solana send with two signers', () => {
  it('control: the treasury alone is denied explicitly', async () => {
    const t = await setup()
    const tx = solanaTransaction(t.treasury, [
      getTransferSolInstruction({ source: createNoopSigner(t.treasury), destination: DEAD, amount: 1n }),
    ])
    const reply = await send(t, [t.treasury], tx)
    expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).toBe(403)
    expect(reply.body.details.outcome).toBe('OUTCOME_DENY_EXPLICIT')
  })

  it('denies a send the treasury signs as second signer', async () => {
    const t = await setup()
    const tx = solanaTransaction(t.spending, [
      getTransferSolInstruction({
        source: createNoopSigner(t.treasury),
        destination: DEAD,
        amount: 10n ** 9n,
      }),
    ])
    const reply = await send(t, [t.spending, t.treasury], tx)
    expect(
      { status: reply.status, outcome: reply.body?.details?.outcome },
      JSON.stringify(reply.body).slice(0, 400),
    ).toEqual({ status: 403, outcome: 'OUTCOME_DENY_EXPLICIT' })
  })
})
