// A DENY on `eth.eip_712` holds on every path that signs typed data: `sign_raw_payloads` with one
// payload, `sign_raw_payload` (the published clients' signMessage/signTypedData,
// ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2), and `sign_raw_payloads` with several, each payload judged in a
// scope of its own. The keyword was once absent on the last two, so the DENY errored (OUTCOME_ERROR,
// "the others decide") and a broad ALLOW signed the forbidden Permit.

import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

const SPENDER = '0x2222222222222222222222222222222222222222'
const permit = JSON.stringify({
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'chainId', type: 'uint256' },
    ],
    Permit: [
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
  },
  primaryType: 'Permit',
  domain: { name: 'USDC', chainId: 1 },
  message: { spender: SPENDER, value: String(10n ** 30n) },
})

async function setup() {
  const { h, sub, at, asBackend, policy } = await delegated([ETHEREUM_ACCOUNT])
  const backend = asBackend.as
  // The back end may sign typed data only (so the service can read it: a raw digest is refused),
  // and never an EIP-712 Permit.
  await policy({
    policyName: 'Back end signs typed data',
    effect: 'EFFECT_ALLOW',
    condition:
      "activity.resource == 'WALLET' && activity.action == 'SIGN' && activity.params.encoding == 'PAYLOAD_ENCODING_EIP712'",
  })
  await policy({
    policyName: 'Never a Permit',
    effect: 'EFFECT_DENY',
    condition: "eth.eip_712.primary_type == 'Permit'",
  })
  return { h, at, backend, address: sub.addresses![0] as string }
}

describe('a DENY on eth.eip_712, whichever path signs the typed data', () => {
  it('control: the raw digest (hex encoding) is not allowed', async () => {
    const t = await setup()
    const reply = await t.h.submit(
      'sign_raw_payload',
      {
        signWith: t.address,
        payload: 'ab'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      { ...t.at, as: t.backend },
    )
    expect(reply.status).toBe(403)
    expect(reply.body.details.outcome).toBe('OUTCOME_DENY_IMPLICIT')
  })

  it('control: sign_raw_payloads with the Permit alone is denied explicitly', async () => {
    const t = await setup()
    const reply = await t.h.submit(
      'sign_raw_payloads',
      {
        signWith: t.address,
        payloads: [permit],
        encoding: 'PAYLOAD_ENCODING_EIP712',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      },
      { ...t.at, as: t.backend },
    )
    expect(reply.status).toBe(403)
    expect(reply.body.details.outcome).toBe('OUTCOME_DENY_EXPLICIT')
  })

  it('denies the same Permit signed with sign_raw_payload (SIGN_RAW_PAYLOAD_V2)', async () => {
    const t = await setup()
    const reply = await t.h.submit(
      'sign_raw_payload',
      {
        signWith: t.address,
        payload: permit,
        encoding: 'PAYLOAD_ENCODING_EIP712',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      },
      { ...t.at, as: t.backend },
    )
    expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).toBe(403)
  })

  it('denies the same Permit when a second payload rides along in sign_raw_payloads', async () => {
    const t = await setup()
    const reply = await t.h.submit(
      'sign_raw_payloads',
      {
        signWith: t.address,
        payloads: [permit, permit],
        encoding: 'PAYLOAD_ENCODING_EIP712',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      },
      { ...t.at, as: t.backend },
    )
    expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).toBe(403)
  })
})
