// A DENY on `wallet` / `wallet_account` holds however the account's hex address is spelled. The
// signer and the exporter (`findAccount`, domain/wallets.ts) match any 0x-hex address in any case;
// the policy context once matched only 40-digit EVM addresses so, and a Sui or Aptos account (0x + 64
// hex) named in upper case was signed with, and exported, with no `wallet` for the DENY to read.
import { generateP256KeyPair } from '@turnkey/crypto'
import { describe, expect, it } from 'vitest'
import { SOLANA_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

const SUI = { ...SOLANA_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_SUI' }

async function setup() {
  const { h, sub, at, asBackend, policy } = await delegated([SUI as never])
  const backend = asBackend.as
  // The back end may sign and export, but never with or from the treasury wallet.
  await policy({
    policyName: 'Back end signs and exports',
    effect: 'EFFECT_ALLOW',
    condition: "activity.action == 'SIGN' || activity.action == 'EXPORT'",
  })
  await policy({
    policyName: 'Never the treasury',
    effect: 'EFFECT_DENY',
    condition: `wallet.id == '${sub.walletId}'`,
  })
  const address = sub.addresses![0] as string
  return { h, at, backend, address }
}

describe('a DENY on wallet, the account named in upper-case hex', () => {
  it('control: signing with the Sui account as listed is denied explicitly', async () => {
    const t = await setup()
    expect(t.address).toMatch(/^0x[0-9a-f]{64}$/)
    const reply = await t.h.submit(
      'sign_raw_payload',
      {
        signWith: t.address,
        payload: 'ab'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      },
      { ...t.at, as: t.backend },
    )
    expect(reply.status).toBe(403)
    expect(reply.body.details.outcome).toBe('OUTCOME_DENY_EXPLICIT')
  })

  it('denies signing with the treasury account named in upper-case hex', async () => {
    const t = await setup()
    const reply = await t.h.submit(
      'sign_raw_payload',
      {
        signWith: `0x${t.address.slice(2).toUpperCase()}`,
        payload: 'ab'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      },
      { ...t.at, as: t.backend },
    )
    expect(reply.status, JSON.stringify(reply.body).slice(0, 400)).toBe(403)
  })

  it('denies exporting the treasury account named in upper-case hex', async () => {
    const t = await setup()
    const target = generateP256KeyPair().publicKeyUncompressed
    const lower = await t.h.submit(
      'export_wallet_account',
      { address: t.address, targetPublicKey: target },
      { ...t.at, as: t.backend },
    )
    expect(lower.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    const reply = await t.h.submit(
      'export_wallet_account',
      { address: `0x${t.address.slice(2).toUpperCase()}`, targetPublicKey: target },
      { ...t.at, as: t.backend },
    )
    expect(reply.status, JSON.stringify(reply.body).slice(0, 400)).toBe(403)
  })
})
