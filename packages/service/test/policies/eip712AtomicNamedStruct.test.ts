// A struct type named like an atomic one (`uint256`): the spelling check took every uint256 field
// for that struct and checked nothing, while the signer (micro-eth-signer) still encoded the field
// as an atomic uint256 from `BigInt(" 1000000")`, which the policy (`eth.eip_712`) could not read:
// a DENY on the value errored and was skipped. The unused struct is not a dependency of the
// primary type, so the signature was the canonical Permit's. Such types are now a 400.
import { recoverAddressTyped, serializeSignature } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

const SPENDER = '0x1111111111111111111111111111111111111111'
const TOKEN = '0x2222222222222222222222222222222222222222'

const permit = (value: unknown, extraTypes: Record<string, unknown> = {}) => ({
  types: {
    Permit: [
      { name: 'owner', type: 'address' },
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'nonce', type: 'uint256' },
      { name: 'deadline', type: 'uint256' },
    ],
    ...extraTypes,
  },
  primaryType: 'Permit',
  domain: { name: 'Token', version: '1', chainId: 1, verifyingContract: TOKEN },
  message: { owner: SPENDER, spender: SPENDER, value, nonce: '0', deadline: '99999999999' },
})

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
      const sign = (typed: unknown) =>
        t.h.submit(
          path,
          {
            signWith,
            ...(path === 'sign_raw_payload'
              ? { payload: JSON.stringify(typed) }
              : { payloads: [JSON.stringify(typed)] }),
            encoding: 'PAYLOAD_ENCODING_EIP712',
            hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
          },
          t.asBackend,
        )
      const canonical = await sign(permit('1000000'))
      expect(canonical.status).toBe(403)
      t.h.clock.advance(1)
      const attack = await sign(permit(' 1000000', { uint256: [{ name: 'x', type: 'bool' }] }))
      let validForCanonical = false
      if (attack.status === 200) {
        const result = attack.body.activity.result
        const { r, s, v } = result.signRawPayloadResult ?? result.signRawPayloadsResult.signatures[0]
        const signature = serializeSignature({ r: BigInt(`0x${r}`), s: BigInt(`0x${s}`), yParity: Number(v) })
        validForCanonical =
          recoverAddressTyped(signature, permit('1000000') as never).toLowerCase() === signWith.toLowerCase()
      }
      expect({ status: attack.status, validForCanonical }).toMatchObject({ validForCanonical: false })
      expect([400, 403]).toContain(attack.status)
      await t.h.service.close()
    })
})
