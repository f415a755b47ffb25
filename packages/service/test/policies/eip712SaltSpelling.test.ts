// Typed data without `types.EIP712Domain` has its domain typed by the signer (micro-eth-signer's
// getDomainType: salt is bytes32, decoded by a hex reader that takes it without `0x`), but the
// spelling check looked only at `domain.chainId` there, and the policy reads `domain.salt` as
// spelled (lower-cased): a salt without `0x` was signed as the canonical salt past a DENY on
// `eth.eip_712.domain.salt`. It is now a 400.
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'
import { permit, signedFor, signTyped } from './typedData.ts'

const SALT = `0x${'ab'.repeat(32)}`
const salted = (salt: string) => permit('1000000', { domain: { salt } })

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
    const sign = (typed: unknown) => signTyped(t, signWith, typed)
    // Control: the canonical spelling is denied.
    expect((await sign(salted(SALT))).body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    t.h.clock.advance(1)
    const attack = await sign(salted(SALT.slice(2)))
    const validForCanonical = signedFor(attack, salted(SALT), signWith)
    expect({ status: attack.status, validForCanonical }).toEqual({ status: 400, validForCanonical: false })
    await t.h.service.close()
  })
})
