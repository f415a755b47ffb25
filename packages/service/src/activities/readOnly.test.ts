import { ACTIVITIES, ACTIVITY_PATHS, type ActivityPath } from '@latchkey/protocol'
import { serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { createHarness, ETHEREUM_ACCOUNT, type Json } from '../testing/harness.ts'

/** Parameters that complete each read-only activity for the account `address`. */
const PARAMETERS: Partial<Record<ActivityPath, (address: string) => Json>> = {
  sign_raw_payloads: (address) => ({
    signWith: address,
    payloads: ['ab'.repeat(32)],
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  }),
  sign_raw_payload: (address) => ({
    signWith: address,
    payload: 'ab'.repeat(32),
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  }),
  sign_transaction: (address) => ({
    signWith: address,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: serializeTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: 0,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
      gas: 21000n,
      to: address as `0x${string}`,
      value: 1n,
    }),
  }),
  create_read_only_session: () => ({}),
}

describe('read-only activities', () => {
  it('change nothing the service stores but their own activity record', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
    })
    const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const readOnly = ACTIVITY_PATHS.filter((path) => ACTIVITIES[path].readOnly)
    expect(readOnly.filter((path) => !PARAMETERS[path])).toEqual([])
    for (const path of readOnly) {
      const { activities, policyEvaluations, ...before } = await h.service.store.dump()
      const reply = await h.submit(path, PARAMETERS[path]!(sub.addresses![0]!), as)
      expect({ path, status: reply.body.activity?.status }).toEqual({
        path,
        status: 'ACTIVITY_STATUS_COMPLETED',
      })
      const { activities: after, policyEvaluations: evaluated, ...rest } = await h.service.store.dump()
      expect(rest, path).toEqual(before)
      // Its activity row and the record of its decision are all that is new.
      const id = reply.body.activity.id
      expect(after, path).toEqual([...activities!, expect.objectContaining({ id })])
      expect(evaluated, path).toEqual([...policyEvaluations!, expect.objectContaining({ activityId: id })])
    }
  })
})
