// The policy reader and the EIP-712 signer read an integer field alike: the signer's `BigInt` also
// took " 1000", "+1000", "0o1750" or "0b…", which the policy (`eth.eip_712`) did not read, so a DENY
// on the field errored and was skipped while the signature was the one for the plain value. Such a
// spelling is now refused before signing (400 naming `parameters.payload`).
import { recoverAddressTyped, serializeSignature } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

const SPENDER = '0x1111111111111111111111111111111111111111'
const TOKEN = '0x2222222222222222222222222222222222222222'

const permit = (value: unknown, chainId: unknown = 1) => ({
  types: {
    Permit: [
      { name: 'owner', type: 'address' },
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'nonce', type: 'uint256' },
      { name: 'deadline', type: 'uint256' },
    ],
  },
  primaryType: 'Permit',
  domain: { name: 'Token', version: '1', chainId, verifyingContract: TOKEN },
  message: { owner: SPENDER, spender: SPENDER, value, nonce: '0', deadline: '99999999999' },
})

/** `sign_raw_payload` of `typed` (EIP-712) by `signWith`, as the delegated back end. */
const signTyped = (t: Awaited<ReturnType<typeof delegated>>, signWith: string, typed: unknown) =>
  t.h.submit(
    'sign_raw_payload',
    {
      signWith,
      payload: JSON.stringify(typed),
      encoding: 'PAYLOAD_ENCODING_EIP712',
      hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
    },
    t.asBackend,
  )

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
    if (spaced.status === 200) {
      // Proof the signature is a valid Permit for value = 1000000 (the canonical typed data).
      const { r, s, v } = spaced.body.activity.result.signRawPayloadResult
      const signature = serializeSignature({ r: BigInt(`0x${r}`), s: BigInt(`0x${s}`), yParity: Number(v) })
      const recovered = recoverAddressTyped(signature, permit('1000000') as never)
      expect({
        status: spaced.status,
        signatureValidForCanonicalPermit: recovered.toLowerCase() === signWith.toLowerCase(),
      }).toEqual({ status: 403, signatureValidForCanonicalPermit: false })
    }
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
    expect((await sign(permit('5', 1))).body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    t.h.clock.advance(1)
    const octal = await sign(permit('5', '0o1'))
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
