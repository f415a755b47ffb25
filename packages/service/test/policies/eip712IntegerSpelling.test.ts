// The policy reader and the EIP-712 signer read an integer field alike: the signer's `BigInt` also
// took " 1000", "+1000", "0o1750" or "0b…", which the policy (`eth.eip_712`) did not read, so a DENY
// on the field errored and was skipped while the signature was the one for the plain value. Such a
// spelling is now refused before signing (400 naming `parameters.payload`).
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'
import { permit, signedFor, signTyped } from './typedData.ts'

describe('EIP-712 integers the policy could not read', () => {
  it('a Permit whose value is spelled otherwise than decimal or hex is refused, not signed past a DENY on it', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0]!
    await t.allowSigning()
    await t.policy({
      policyName: 'no permit over 100',
      effect: 'EFFECT_DENY',
      condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && eth.eip_712.message.value > 100",
    })
    const sign = (typed: unknown) => signTyped(t, signWith, typed)
    // Control: the canonical spelling is refused by the DENY.
    const canonical = await sign(permit('1000000'))
    expect(canonical.status).toBe(403)
    expect(canonical.body.details.outcome).toBe('OUTCOME_DENY_EXPLICIT')

    // Attack: the same amount spelled with a leading space.
    t.h.clock.advance(1)
    const spaced = await sign(permit(' 1000000'))
    if (spaced.status === 200)
      // Proof the signature is a valid Permit for value = 1000000 (the canonical typed data).
      expect({
        status: spaced.status,
        signatureValidForCanonicalPermit: signedFor(spaced, permit('1000000'), signWith),
      }).toEqual({ status: 403, signatureValidForCanonicalPermit: false })
    expect({ status: spaced.status, field: spaced.body.details?.field }).toEqual({
      status: 400,
      field: 'parameters.payload',
    })
    await t.h.service.close()
  })

  it('a chain id spelled "0o1" is refused, not signed past a DENY on chain 1', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0]!
    await t.allowSigning()
    await t.policy({
      policyName: 'no mainnet typed data',
      effect: 'EFFECT_DENY',
      condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && eth.eip_712.domain.chain_id == 1",
    })
    const sign = (typed: unknown) => signTyped(t, signWith, typed)
    expect((await sign(permit('5', { domain: { chainId: 1 } }))).body.details?.outcome).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
    t.h.clock.advance(1)
    const octal = await sign(permit('5', { domain: { chainId: '0o1' } }))
    expect({ status: octal.status, field: octal.body.details?.field }).toEqual({
      status: 400,
      field: 'parameters.payload',
    })
    await t.h.service.close()
  })

  it('types named after an object prototype member, or type lists that are not lists, are a 400, not a 500', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0]!
    await t.allowSigning()
    // A policy reading the typed data, so that its context is built from each payload.
    await t.policy({
      policyName: 'no permit over 100',
      effect: 'EFFECT_DENY',
      condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && eth.eip_712.message.value > 100",
    })
    const malformed = [
      { ...permit('5'), types: { Permit: [{ name: 'value', type: 'toString' }] }, message: { value: {} } },
      { ...permit('5'), primaryType: 'constructor' },
      { ...permit('5'), types: { Permit: 5 } },
      { ...permit('5'), types: { Permit: [null] } },
    ]
    for (const typed of malformed) {
      t.h.clock.advance(1)
      const answer = await signTyped(t, signWith, typed)
      expect({ typed, status: answer.status, field: answer.body.details?.field }).toEqual({
        typed,
        status: 400,
        field: 'parameters.payload',
      })
    }
    await t.h.service.close()
  })
})
