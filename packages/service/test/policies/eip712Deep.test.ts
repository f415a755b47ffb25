// Typed data nested deeper than the signer's bound (64): the spelling check walked it with no depth
// limit (the signer and the policy reader stop at 64), so a message nested 14,000 deep, under
// the body limit, overflowed the stack, a RangeError answered as a 500. Now a 400.
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

const deep = (depth: number) => {
  // A field of type uint256[][]...[] (depth brackets) holding [[...[]...]]: each level one more
  // call of the spelling check; built as text (JSON.stringify would recurse too).
  const type = 'uint256' + '[]'.repeat(depth)
  const value = '['.repeat(depth) + ']'.repeat(depth)
  return `{"types":{"M":[{"name":"a","type":"${type}"}]},"primaryType":"M","domain":{"name":"x"},"message":{"a":${value}}}`
}

describe('EIP-712: deep self-referencing typed data', () => {
  for (const path of ['sign_raw_payload', 'sign_raw_payloads'] as const)
    it(`${path}: is a 400, not a 500`, async () => {
      const t = await delegated([ETHEREUM_ACCOUNT])
      const signWith = t.sub.addresses![0]!
      await t.allowSigning()
      const payload = deep(14_000)
      const answer = await t.h.submit(
        path,
        {
          signWith,
          ...(path === 'sign_raw_payload' ? { payload } : { payloads: [payload] }),
          encoding: 'PAYLOAD_ENCODING_EIP712',
          hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
        },
        t.asBackend,
      )
      expect({ status: answer.status, body: JSON.stringify(answer.body).slice(0, 300) }).toMatchObject({
        status: 400,
      })
      await t.h.service.close()
    })
})
