import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GasCaps, SendingOptions } from '../../src/sending/SendingOptions.ts'
import { type Json, resultOf, testKey } from '../../src/testing/harness.ts'
import {
  type Chain,
  endUser,
  erc20Call,
  sendCount,
  sponsoredService,
  startChain,
  waitForSend,
} from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'
const BLOCKED = '0x00000000000000000000000000000000000b10c4'

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

const service = (caps: GasCaps = {}, sending: SendingOptions = {}) => sponsoredService(chain, caps, sending)

describe('eth_send_transaction refuses bad input before signing anything', () => {
  it('names the field of each mistake with a 4xx', async () => {
    const h = await service()
    const user = await endUser(h)
    const call = { to: DEAD, value: '1' }
    const cases: [Json, number, string][] = [
      [{ calls: Array.from({ length: 51 }, () => call) }, 400, 'parameters.calls'],
      [{ calls: [{ to: '0x', value: '1' }] }, 400, 'parameters.calls[0].to'],
      [{ calls: [{ to: '', value: '1' }] }, 400, 'parameters.calls[0].to'],
      [
        { calls: [call], sponsor: true, deadline: String(Math.floor(Date.now() / 1000) - 60) },
        400,
        'parameters.deadline',
      ],
      // A sponsored batch whose deadline could pass before it is mined would revert at the
      // sponsor's cost: at least 5 minutes ahead.
      [
        { calls: [call], sponsor: true, deadline: String(Math.floor(Date.now() / 1000) + 60) },
        400,
        'parameters.deadline',
      ],
      [{ calls: [call], caip2: 'eip155:1' }, 412, 'parameters.caip2'],
      [{ calls: [{ to: DEAD, value: '1.5' }] }, 400, 'parameters.calls[0].value'],
      [{ calls: [{ to: DEAD, value: '0x10' }] }, 400, 'parameters.calls[0].value'],
      [{ calls: [{ to: DEAD, data: '0x123' }] }, 400, 'parameters.calls[0].data'],
      [{ calls: [] }, 400, 'parameters.calls'],
      // Outside what the signer encodes: a 400 naming the field, never a 500.
      [{ calls: [call], maxFeePerGas: '100000000000000' }, 400, 'parameters.maxFeePerGas'],
      [
        { calls: [call], maxFeePerGas: '10', maxPriorityFeePerGas: '11' },
        400,
        'parameters.maxPriorityFeePerGas',
      ],
      [{ calls: [call], gasLimit: '20000' }, 400, 'parameters.gasLimit'],
      [{ calls: [call], nonce: '200000' }, 400, 'parameters.nonce'],
    ]
    for (const [parameters, status, field] of cases) {
      const reply = await user.send(parameters)
      expect(
        { status: reply.status, field: reply.body.details?.field },
        JSON.stringify(parameters).slice(0, 80),
      ).toEqual({
        status,
        field,
      })
    }
    expect(await sendCount(h)).toBe(0)
    await h.service.close()
  })
})

describe("a sponsored batch's deadline", () => {
  it('five minutes away or more is signed and runs; the 400 above names a nearer one', async () => {
    const h = await service()
    const user = await endUser(h)
    const reply = await user.send({
      sponsor: true,
      deadline: String(Math.floor(h.clock.now() / 1000) + 301),
      calls: [erc20Call('mint', DEAD, 1n)],
    })
    const id = resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
    expect(await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).toMatchObject({
      txStatus: 'INCLUDED',
    })
    await h.service.close()
  })
})

describe('gas caps', () => {
  it('refuses the sponsored send past a user daily cap before signing; other users are unaffected', async () => {
    const h = await service({ perUserPerDay: 400_000 })
    const [alice, bob] = [await endUser(h), await endUser(h)]
    const one = { sponsor: true, gasLimit: '200000', calls: [erc20Call('mint', DEAD, 1n)] }
    const accepted: string[] = []
    // Unmined meanwhile: a mined send's caps keep only what it cost (sponsorMoney.test.ts).
    await chain.rpc('evm_setAutomine', [false])
    try {
      for (let i = 0; i < 2; i++) {
        const reply = await alice.send(one)
        accepted.push(resultOf('eth_send_transaction', reply).sendTransactionStatusId)
      }
      const refused = await alice.send(one)
      expect(refused).toMatchObject({
        status: 429,
        body: {
          details: { errorCode: 'GAS_CAP_EXCEEDED', field: 'parameters.sponsor', cap: 'per-user daily' },
        },
      })
      expect(await sendCount(h)).toBe(2)
      const bobs = await bob.send(one)
      expect(bobs.status).toBe(200)
    } finally {
      await chain.rpc('evm_setAutomine', [true])
    }
    await chain.rpc('evm_mine', [])
    for (const id of accepted)
      expect(await waitForSend(h, id, { organizationId: alice.organizationId, as: alice.as })).toMatchObject({
        txStatus: 'INCLUDED',
      })
    await h.service.close()
  })

  it('refuses a sponsored send over the per-transaction cap', async () => {
    const h = await service({ perTransaction: 100_000 })
    const user = await endUser(h)
    const reply = await user.send({
      sponsor: true,
      calls: [erc20Call('mint', DEAD, 1n), erc20Call('mint', DEAD, 2n)],
    })
    expect(reply).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-transaction' } },
    })
    expect(await sendCount(h)).toBe(0)
    await h.service.close()
  })
})

describe('policies on sends', () => {
  it('judge every call of a sponsored batch: a DENY on one call refuses the whole batch', async () => {
    const h = await service()
    const user = await endUser(h)
    const backend = testKey()
    const { userIds } = resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'backend',
              apiKeys: [backend.apiKey('backend')],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        user.as,
      ),
    )
    const policy = (params: Json) => h.submit('create_policy', { notes: '', ...params }, user.as)
    expect(
      (
        await policy({
          policyName: 'back end sends',
          effect: 'EFFECT_ALLOW',
          condition: "activity.resource == 'WALLET' && activity.action == 'SEND'",
          consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await policy({
          policyName: 'never to BLOCKED',
          effect: 'EFFECT_DENY',
          condition: `eth.tx.to == '${BLOCKED}'`,
        })
      ).status,
    ).toBe(200)
    const asBackend = { organizationId: user.organizationId, as: backend }
    const submit = (calls: Json[]) => {
      h.clock.set(Date.now())
      return h.submit(
        'eth_send_transaction',
        { from: user.from, caip2: CAIP2, sponsor: true, calls },
        asBackend,
      )
    }
    const denied = await submit([erc20Call('mint', DEAD, 1n), { to: BLOCKED, value: '0' }])
    expect(denied).toMatchObject({
      status: 403,
      body: { details: { errorCode: 'PERMISSION_DENIED', outcome: 'OUTCOME_DENY_EXPLICIT' } },
    })
    expect(await sendCount(h)).toBe(0)
    const allowed = await submit([erc20Call('mint', DEAD, 1n)])
    const id = resultOf('eth_send_transaction', allowed).sendTransactionStatusId
    expect(
      await waitForSend(h, id, { organizationId: user.organizationId, as: { as: backend } as never }),
    ).toMatchObject({
      txStatus: 'INCLUDED',
    })
    await h.service.close()
  })
})
