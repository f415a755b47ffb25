// Typed data nested deeper than the policy reader went (16 levels, where the signer signs 64): a
// field past the 16th level was left out of `eth.eip_712`, so a DENY on it errored and refused
// nothing while the signature covered it. The reader now goes as deep as the signer.
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'
import { signTyped } from './typedData.ts'

const LEVELS = 20

/** A message nested `LEVELS` structs deep (`L0.inner.inner…` to `Leaf.amount`). */
function nested(amount: string) {
  const types: Record<string, { name: string; type: string }[]> = {
    Leaf: [{ name: 'amount', type: 'uint256' }],
  }
  let message: Record<string, unknown> = { amount }
  for (let level = LEVELS - 1; level >= 0; level--) {
    types[`L${level}`] = [{ name: 'inner', type: level === LEVELS - 1 ? 'Leaf' : `L${level + 1}` }]
    message = { inner: message }
  }
  return { types, primaryType: 'L0', domain: { name: 'Deep', version: '1', chainId: 1 }, message }
}

describe('EIP-712: a DENY on a field past the 16th level', () => {
  it('refuses what the signer would sign', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0]!
    await t.allowSigning()
    await t.policy({
      policyName: 'no deep amount over 100',
      effect: 'EFFECT_DENY',
      condition: `activity.kind == 'sign_raw_payload' && eth.eip_712.message${'.inner'.repeat(LEVELS)}.amount > 100`,
    })
    expect((await signTyped(t, signWith, nested('5'))).status).toBe(200)
    t.h.clock.advance(1)
    const over = await signTyped(t, signWith, nested('1000000'))
    expect(over.status).toBe(403)
    expect(JSON.stringify(over.body)).toContain('OUTCOME_DENY_EXPLICIT')
    await t.h.service.close()
  })
})
