// A struct type named like an atomic one (`uint256`): the spelling check took every uint256 field
// for that struct and checked nothing, while the signer (micro-eth-signer) still encoded the field
// as an atomic uint256 from `BigInt(" 1000000")`, which the policy (`eth.eip_712`) could not read:
// a DENY on the value errored and was skipped. The unused struct is not a dependency of the
// primary type, so the signature was the canonical Permit's. Such types are now a 400.
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'
import { permit, signedFor, signTyped } from './typedData.ts'

describe('EIP-712: a struct named uint256', () => {
  for (const path of ['sign_raw_payload', 'sign_raw_payloads'] as const)
    it(`${path}: a Permit over the DENY limit is not signed when the types also declare a struct "uint256"`, async () => {
      const t = await delegated([ETHEREUM_ACCOUNT])
      const signWith = t.sub.addresses![0]!
      await t.allowSigning()
      await t.policy({
        policyName: 'no permit over 100',
        effect: 'EFFECT_DENY',
        condition: `activity.kind == '${path}' && eth.eip_712.message.value > 100`,
      })
      const sign = (typed: unknown) => signTyped(t, signWith, typed, path)
      const canonical = await sign(permit('1000000'))
      expect(canonical.status).toBe(403)
      t.h.clock.advance(1)
      const attack = await sign(
        permit(' 1000000', { extraTypes: { uint256: [{ name: 'x', type: 'bool' }] } }),
      )
      const validForCanonical = signedFor(attack, permit('1000000'), signWith)
      expect({ status: attack.status, validForCanonical }).toMatchObject({ validForCanonical: false })
      expect([400, 403]).toContain(attack.status)
      await t.h.service.close()
    })
})
