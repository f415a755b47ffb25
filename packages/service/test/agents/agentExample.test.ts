// The agent-key recipe (examples/agent/agent.ts, docs/agents.md) against a served test service,
// through the published @turnkey/http client: the agent signs within its allowance, is refused over
// it with the typed 429, and cannot raise its limit, create a key, export, or reach another wallet;
// the user revoking its key stops it.
import { hexToBytes } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  agentTransfer,
  clientOf,
  grantAgent,
  newAgentKey,
  type Refusal,
  refusalOf,
  revokeAgent,
} from '../../../../examples/agent/agent.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { type ServedHarness, serveHarness } from '../support/servedHarness.ts'

const MERCHANT = '0x000000000000000000000000000000000000beef'

let h: Harness
let baseUrl: string
let served: ServedHarness | undefined

beforeAll(async () => {
  served = await serveHarness()
  ;({ h, baseUrl } = served)
}, 60_000)

afterAll(async () => {
  await served?.close()
})

/** The refusal a call fails with (it must fail). */
async function refused(call: Promise<unknown>): Promise<Refusal> {
  try {
    await call
  } catch (error) {
    const refusal = refusalOf(error)
    if (refusal) return refusal
    throw error
  }
  throw new Error('expected a refusal')
}

describe('agent keys (examples/agent/agent.ts)', () => {
  it('signs within its allowance, is refused over it, cannot widen its reach, and stops when revoked', async () => {
    const userKey = newAgentKey()
    const sub = await h.createSubOrganization({
      keys: [testKey('SIGNATURE_SCHEME_TK_API_P256', hexToBytes(userKey.apiPrivateKey))],
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
    })
    const organizationId = sub.organizationId
    h.clock.advance(1)
    const savings = resultOf(
      'create_wallet',
      await h.submit(
        'create_wallet',
        { walletName: 'Savings', accounts: [ETHEREUM_ACCOUNT] },
        { as: sub.keys[0]!, organizationId },
      ),
    )
    const owner = clientOf(baseUrl, userKey)
    const key = newAgentKey()
    const granted = await grantAgent(owner, {
      organizationId,
      walletId: sub.walletId!,
      agentName: 'trading bot',
      agentPublicKey: key.apiPublicKey,
      caip2: 'eip155:1',
      allowancePerDay: '1000',
      onlyTo: MERCHANT,
    })
    const agent = clientOf(baseUrl, key)
    const from = sub.addresses![0]!
    // Transfers that pay no fee: the allowance counts their value alone.
    const pay = (
      value: bigint,
      nonce: number,
      more: { from?: string; to?: string; maxFeePerGas?: bigint } = {},
    ) =>
      agentTransfer(agent, {
        organizationId,
        from,
        to: MERCHANT,
        value,
        chainId: 1,
        nonce,
        maxFeePerGas: 0n,
        ...more,
      })

    // Within the allowance: signed.
    expect(await pay(600n, 0)).toEqual({ signedTransaction: expect.stringMatching(/^02/) })
    // Over it: the typed refusal (429 RESOURCE_EXHAUSTED) naming what remains.
    const over = await pay(600n, 1)
    expect(over).toMatchObject({
      code: 8,
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
      details: { spendingLimitId: granted.spendingLimitId, used: '600', remaining: '400' },
    })
    expect(await pay(400n, 2)).toHaveProperty('signedTransaction')
    // A fee it would pay counts too: 21,000 gas at 1 wei, with nothing sent, is over what is left.
    expect(await pay(0n, 3, { maxFeePerGas: 1n })).toMatchObject({
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
      details: { used: '1000', remaining: '0', requested: '21000' },
    })

    // Another wallet, another recipient: no policy allows it.
    const otherWallet = await pay(1n, 3, { from: savings.addresses[0] })
    expect(otherWallet).toMatchObject({ errorCode: 'PERMISSION_DENIED' })
    expect(await pay(1n, 3, { to: '0x000000000000000000000000000000000000dead' })).toMatchObject({
      errorCode: 'PERMISSION_DENIED',
    })
    const now = () => String(Date.now())
    // It cannot raise its own limit, create another key, or export the wallet.
    const raise = await refused(
      agent.request('/public/v1/submit/latchkey_update_spending_limit', {
        type: 'ACTIVITY_TYPE_LATCHKEY_UPDATE_SPENDING_LIMIT',
        timestampMs: now(),
        organizationId,
        parameters: { spendingLimitId: granted.spendingLimitId, amount: String(10n ** 30n) },
      }),
    )
    expect(raise.errorCode).toBe('PERMISSION_DENIED')
    const newKey = await refused(
      agent.createApiKeys({
        type: 'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
        timestampMs: now(),
        organizationId,
        parameters: {
          userId: granted.agentUserId,
          apiKeys: [
            { apiKeyName: 'spare', publicKey: newAgentKey().apiPublicKey, curveType: 'API_KEY_CURVE_P256' },
          ],
        },
      }),
    )
    expect(newKey.errorCode).toBe('PERMISSION_DENIED')
    const exported = await refused(
      agent.exportWallet({
        type: 'ACTIVITY_TYPE_EXPORT_WALLET',
        timestampMs: now(),
        organizationId,
        parameters: { walletId: sub.walletId!, targetPublicKey: newAgentKey().apiPublicKey },
      }),
    )
    expect(exported.errorCode).toBe('PERMISSION_DENIED')
    const limits = await h.query('latchkey_list_spending_limits', {}, { as: sub.keys[0]!, organizationId })
    expect(limits.body.spendingLimits[0]).toMatchObject({ amount: '1000', used: '1000' })

    // The user revokes the key: the agent's next request is not even authenticated.
    await revokeAgent(owner, { organizationId, ...granted })
    const after = await pay(1n, 4)
    expect(after).toMatchObject({ errorCode: 'PUBLIC_KEY_NOT_FOUND' })
  })
})
