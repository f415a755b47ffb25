import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { ApiKeyStamper } from '@turnkey/api-key-stamper'
import { TurnkeyClient } from '@turnkey/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ETHEREUM_ACCOUNT, fakeClock, resultOf } from '../../src/testing/harness.ts'
import { type Chain, startChain } from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

describe('@turnkey/core 2.8.1 against the local service', () => {
  it('ethSendTransaction then pollTransactionStatus reach INCLUDED with the transaction hash, unchanged', async () => {
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { pollIntervalMs: 20 },
    })
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Core', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0]
    await chain.fund(from, 10n ** 18n)
    // The service's own clock follows real time for the client's timestamps.
    const tick = setInterval(() => h.clock.set(Date.now()), 10)
    // Requests being answered: the published client's poll does not wait for its last one.
    let answering = 0
    const server = serve({
      fetch: async (request) => {
        answering++
        try {
          return await h.service.app.fetch(request)
        } finally {
          answering--
        }
      },
      port: 0,
      hostname: '127.0.0.1',
    })
    await new Promise((resolve) => server.once('listening', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const dev = h.service.dev
      const stamper = new ApiKeyStamper({ apiPublicKey: dev.apiPublicKey, apiPrivateKey: dev.apiPrivateKey })
      const client = new TurnkeyClient(
        { apiBaseUrl: `http://127.0.0.1:${port}`, organizationId: dev.organizationId },
        stamper as never,
      )
      // `init()` sets up browser storage; in Node the client gets its HTTP client and a session store
      // holding the dev organization's session (its key is the stamper's).
      const session = {
        organizationId: dev.organizationId,
        publicKey: dev.apiPublicKey,
        expiry: Date.now() + 3_600_000,
      }
      Object.assign(client, { storageManager: { getActiveSession: async () => session } })
      Object.assign(client, {
        httpClient: (client as unknown as { createHttpClient(): unknown }).createHttpClient(),
      })
      const sendTransactionStatusId = await client.ethSendTransaction({
        organizationId: dev.organizationId,
        transaction: {
          from,
          caip2: CAIP2,
          to: '0x000000000000000000000000000000000000dead',
          value: '12345',
        } as never,
      } as never)
      const status = (await client.pollTransactionStatus({
        organizationId: dev.organizationId,
        sendTransactionStatusId,
        pollingIntervalMs: 50,
      } as never)) as { txStatus: string; eth: { txHash: string } }
      expect(status.txStatus).toBe('INCLUDED')
      const mined = (await chain.rpc('eth_getTransactionByHash', [status.eth.txHash])) as {
        from: string
        value: string
      }
      expect(mined).toMatchObject({ from: from.toLowerCase(), value: '0x3039' })
    } finally {
      // `pollTransactionStatus` asks again every interval without waiting for the last answer, so
      // when one answer ends the poll another request may still be on its way; were the service
      // closed under it, its 503 would be an unhandled rejection inside the client (as CI saw once).
      // Close only once nothing has been in flight for two looks 100 ms apart.
      for (let quiet = 0, tries = 0; quiet < 2 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        quiet = answering === 0 ? quiet + 1 : 0
      }
      clearInterval(tick)
      server.close()
      await h.service.close()
    }
  })
})
