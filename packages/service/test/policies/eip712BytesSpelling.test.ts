// EIP-712 `bytes` / `bytesN` values reached the policy (`eth.eip_712`) as the caller spelled them,
// while the signer (micro-eth-signer's ethHex.decode) reads any case, with or without 0x: a DENY on
// a Safe transaction's calldata selector was skipped by spelling the same bytes in upper case or
// without 0x, and the signature was the canonical SafeTx's. The policy now reads them lower-case,
// and bytes without 0x are a 400.
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'
import { signedFor, signTyped } from './typedData.ts'

const SAFE = '0x2222222222222222222222222222222222222222'
const TOKEN = '0x3333333333333333333333333333333333333333'
const TRANSFER =
  '0xa9059cbb0000000000000000000000001111111111111111111111111111111111111111000000000000000000000000000000000000000000000000000000000000ffff'

const safeTx = (data: string) => ({
  types: {
    EIP712Domain: [
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    SafeTx: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'data', type: 'bytes' },
      { name: 'operation', type: 'uint8' },
      { name: 'safeTxGas', type: 'uint256' },
      { name: 'baseGas', type: 'uint256' },
      { name: 'gasPrice', type: 'uint256' },
      { name: 'gasToken', type: 'address' },
      { name: 'refundReceiver', type: 'address' },
      { name: 'nonce', type: 'uint256' },
    ],
  },
  primaryType: 'SafeTx',
  domain: { chainId: 1, verifyingContract: SAFE },
  message: {
    to: TOKEN,
    value: '0',
    data,
    operation: 0,
    safeTxGas: '0',
    baseGas: '0',
    gasPrice: '0',
    gasToken: '0x0000000000000000000000000000000000000000',
    refundReceiver: '0x0000000000000000000000000000000000000000',
    nonce: '0',
  },
})

describe('EIP-712 bytes spelled in another case', () => {
  for (const spelled of [`0x${TRANSFER.slice(2).toUpperCase()}`, TRANSFER.slice(2)])
    it(`a SafeTx transfer (${spelled.slice(0, 12)}…) is refused by the DENY on its selector`, async () => {
      const t = await delegated([ETHEREUM_ACCOUNT])
      const signWith = t.sub.addresses![0]!
      await t.allowSigning()
      await t.policy({
        policyName: 'no Safe token transfers',
        effect: 'EFFECT_DENY',
        condition:
          "activity.kind == 'sign_raw_payload' && eth.eip_712.primary_type == 'SafeTx' && eth.eip_712.message.data[0..10] == '0xa9059cbb'",
      })
      const sign = (typed: unknown) => signTyped(t, signWith, typed)
      expect((await sign(safeTx(TRANSFER))).body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
      t.h.clock.advance(1)
      const attack = await sign(safeTx(spelled))
      const validForCanonical = signedFor(attack, safeTx(TRANSFER), signWith)
      expect({ status: attack.status, validForCanonical }).toMatchObject({ validForCanonical: false })
      await t.h.service.close()
    })
})
