// Typed data without `types.EIP712Domain` has its domain typed by the signer (micro-eth-signer's
// getDomainType: salt is bytes32, decoded by a hex reader that takes it without `0x`), but the
// spelling check looked only at `domain.chainId` there, and the policy reads `domain.salt` as
// spelled (lower-cased): a salt without `0x` was signed as the canonical salt past a DENY on
// `eth.eip_712.domain.salt`. It is now a 400.
import { recoverAddressTyped, serializeSignature } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

const SPENDER = '0x1111111111111111111111111111111111111111'
const TOKEN = '0x2222222222222222222222222222222222222222'
const SALT = `0x${'ab'.repeat(32)}`

const permit = (salt: string) => ({
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
  domain: { name: 'Token', version: '1', chainId: 1, verifyingContract: TOKEN, salt },
  message: { owner: SPENDER, spender: SPENDER, value: '1000000', nonce: '0', deadline: '99999999999' },
})

describe('EIP-712 domain salt spelled without 0x (no EIP712Domain in types)', () => {
  it('is refused (400) or denied, never signed past a DENY on that salt', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0]!
    await t.allowSigning()
    await t.policy({
      policyName: 'not this domain',
      effect: 'EFFECT_DENY',
      condition: `activity.kind == 'sign_raw_payload' && eth.eip_712.domain.salt == '${SALT}'`,
    })
    const sign = (typed: unknown) =>
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
    // Control: the canonical spelling is denied.
    expect((await sign(permit(SALT))).body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    t.h.clock.advance(1)
    const attack = await sign(permit(SALT.slice(2)))
    let validForCanonical = false
    if (attack.status === 200) {
      const { r, s, v } = attack.body.activity.result.signRawPayloadResult
      const signature = serializeSignature({ r: BigInt(`0x${r}`), s: BigInt(`0x${s}`), yParity: Number(v) })
      validForCanonical =
        recoverAddressTyped(signature, permit(SALT) as never).toLowerCase() === signWith.toLowerCase()
    }
    expect({ status: attack.status, validForCanonical }).toEqual({ status: 400, validForCanonical: false })
    await t.h.service.close()
  })
})
