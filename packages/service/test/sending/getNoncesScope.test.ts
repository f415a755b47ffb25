// `get_nonces` answers for an account of the organization the request names (its wallet accounts
// and private keys), never for anyone's address: another organization's stored counter counts the
// sends it committed and has not broadcast yet, and the operator's node is not anyone's to ask.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { ApiKeyStamper } from '@turnkey/api-key-stamper'
import { TurnkeyClient } from '@turnkey/http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toChecksumAddress } from '../../src/kernel/crypto/addresses.ts'
import { ETHEREUM_ACCOUNT, type Harness, type Reply, resultOf } from '../../src/testing/harness.ts'
import { type Chain, endUser, sponsoredService, startChain, waitForSend } from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'
const NO_ONE = '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c'

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

/** A service on the chain whose JSON-RPC calls are kept, lower-cased, as sent to the node. */
async function recordedService() {
  const calls: string[] = []
  const recording: typeof fetch = async (input, init) => {
    calls.push(String(init?.body).toLowerCase())
    return fetch(input, init)
  }
  const h = await sponsoredService(chain, {}, {}, { fetch: recording })
  /** The node calls naming `address` so far. */
  const asked = (address: string) => calls.filter((call) => call.includes(address.slice(2).toLowerCase()))
  return { h, asked }
}

const both = { caip2: CAIP2, nonce: true, gasStationNonce: true }

function expectRefused(reply: Reply) {
  expect({ status: reply.status, details: reply.body.details }).toMatchObject({
    status: 404,
    details: { errorCode: 'WALLET_ACCOUNT_NOT_FOUND', field: 'address' },
  })
}

/** Dev-organization wallet account, created by its root key. */
async function devAccount(h: Harness): Promise<string> {
  const { addresses } = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: 'Dev', accounts: [ETHEREUM_ACCOUNT] }),
  )
  return addresses[0]
}

describe('get_nonces of an address', () => {
  it("refuses another sub-organization's account and an address no one holds, without asking the node", async () => {
    const { h, asked } = await recordedService()
    const a = await endUser(h)
    const b = await endUser(h)
    await chain.fund(b.from, 10n ** 18n)
    // B's counter is ahead of a fresh account's: one send of its own, mined.
    const sent = resultOf('eth_send_transaction', await b.send({ calls: [{ to: DEAD, value: '1' }] }))
    expect(
      (await waitForSend(h, sent.sendTransactionStatusId, { organizationId: b.organizationId, as: b.as }))
        .txStatus,
    ).toBe('INCLUDED')
    expect((await h.query('get_nonces', { address: b.from, ...both }, b.as)).body).toEqual({
      nonce: '1',
      gasStationNonce: '0',
    })

    const before = { b: asked(b.from).length, noOne: asked(NO_ONE).length }
    // B's own answer asked the node about B (what the refusals below must not do).
    expect(before.b).toBeGreaterThan(0)
    for (const address of [b.from, b.from.toLowerCase(), NO_ONE, toChecksumAddress(NO_ONE)]) {
      expectRefused(await h.query('get_nonces', { address, ...both }, a.as))
      expectRefused(await h.query('get_nonces', { address, caip2: CAIP2, nonce: true }, a.as))
      expectRefused(await h.query('get_nonces', { address, caip2: CAIP2, gasStationNonce: true }, a.as))
    }
    const refusal = await h.query('get_nonces', { address: b.from, ...both }, a.as)
    expect(refusal.body.message).toContain(b.from)
    expect(refusal.body.message).toContain(a.organizationId)
    expect(refusal.body.message).not.toMatch(/nonce [0-9]/)
    // Neither eth_getTransactionCount nor the delegate's nonce() of either address.
    expect({ b: asked(b.from).length, noOne: asked(NO_ONE).length }).toEqual(before)
    await h.service.close()
  }, 60_000)

  it("answers the organization's own wallet accounts and private keys in any spelling; a parent's user only when naming the sub-organization", async () => {
    const { h } = await recordedService()
    const a = await endUser(h)
    const own = { nonce: '0', gasStationNonce: '0' }
    for (const address of [a.from, a.from.toLowerCase(), toChecksumAddress(a.from)]) {
      const reply = await h.query('get_nonces', { address, ...both }, a.as)
      expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: own })
    }
    const key = resultOf(
      'create_private_keys',
      await h.submit(
        'create_private_keys',
        {
          privateKeys: [
            {
              privateKeyName: 'treasury',
              curve: 'CURVE_SECP256K1',
              privateKeyTags: [],
              addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
            },
          ],
        },
        a.as,
      ),
    ).privateKeys[0].addresses[0].address as string
    for (const address of [key, key.toLowerCase()])
      expect((await h.query('get_nonces', { address, ...both }, a.as)).body).toEqual(own)

    // The dev organization's root user reads its sub-organization by naming it (as every query)...
    const named = await h.query('get_nonces', { organizationId: a.organizationId, address: a.from, ...both })
    expect({ status: named.status, body: named.body }).toEqual({ status: 200, body: own })
    // ...and not as an address of its own organization, nor a sub-organization's private key.
    expectRefused(await h.query('get_nonces', { address: a.from, ...both }))
    expectRefused(await h.query('get_nonces', { address: key, ...both }))
    // A sub-organization's user never reads its parent's accounts.
    expectRefused(await h.query('get_nonces', { address: await devAccount(h), ...both }, a.as))
    await h.service.close()
  }, 60_000)

  it('@turnkey/http getNonces: its own account as it always did, a sub-organization account named under the parent refused', async () => {
    const { h } = await recordedService()
    const a = await endUser(h)
    const from = await devAccount(h)
    const tick = setInterval(() => h.clock.set(Date.now()), 10)
    const server = serve({ fetch: (request) => h.service.app.fetch(request), port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const dev = h.service.dev
      const client = new TurnkeyClient(
        { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
        new ApiKeyStamper({ apiPublicKey: dev.apiPublicKey, apiPrivateKey: dev.apiPrivateKey }),
      )
      const ask = (organizationId: string, address: string) =>
        client.getNonces({
          organizationId,
          address,
          caip2: CAIP2 as never,
          nonce: true,
          gasStationNonce: true,
        })
      expect(await ask(dev.organizationId, from.toLowerCase())).toEqual({ nonce: '0', gasStationNonce: '0' })
      expect(await ask(a.organizationId, a.from)).toEqual({ nonce: '0', gasStationNonce: '0' })
      await expect(ask(dev.organizationId, a.from)).rejects.toThrow(/address/)
    } finally {
      clearInterval(tick)
      server.close()
      await h.service.close()
    }
  }, 60_000)
})
