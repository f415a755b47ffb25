// kill -9 of a service process between the commit of a send and its broadcast, on a data dir
// (SQLite): the restarted process broadcasts it exactly once and follows it to INCLUDED.
// Black box: the CLI as child processes, a JSON-RPC relay in front of anvil that holds the first
// process's broadcast so the kill lands after the commit and before the node has the transaction.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'
import { RootClient, resultOf } from '../support/RootClient.ts'
import { killAll, type ServiceProcess, startService } from '../support/serviceProcess.ts'
import { type Chain, startChain } from './sendSupport.ts'

const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A relay to anvil: `hold` keeps every eth_sendRawTransaction unanswered and unforwarded. */
async function startRelay(target: string) {
  const relay = { hold: true, held: [] as string[], forwarded: [] as string[] }
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    const { method, params } = JSON.parse(body) as { method: string; params: string[] }
    if (method === 'eth_sendRawTransaction') {
      if (relay.hold) {
        relay.held.push(params[0]!)
        return // never answered: the process dies waiting
      }
      relay.forwarded.push(params[0]!)
    }
    const answer = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    response.setHeader('content-type', 'application/json')
    response.end(await answer.text())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    relay,
    url,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

let chain: Chain
const dirs: string[] = []

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterEach(killAll)

afterAll(async () => {
  await chain?.node.close()
  for (const dir of dirs) removeDir(dir)
})

describe('kill -9 between the commit of a send and its broadcast', () => {
  it('the restarted service broadcasts it exactly once, and it is included', {
    timeout: 150_000,
  }, async () => {
    const dataDir = tempDir('send-crash')
    dirs.push(dataDir)
    const { relay, url, close } = await startRelay(chain.url)
    // A claim lasts 3 × the RPC timeout: 3 s here, 30 s by default.
    const args = ['--data-dir', dataDir, '--rpc', `${CAIP2}=${url}`, '--rpc-timeout-ms', '1000']
    let first: ServiceProcess | undefined = await startService({ name: 'first', args })
    const root = new RootClient(first.info)
    const { addresses } = resultOf(
      'create_wallet',
      await root.submit(first, 'create_wallet', { walletName: 'crash', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0] as string
    await chain.fund(from, 10n ** 18n)
    const reply = await root.submit(first, 'eth_send_transaction', {
      from,
      caip2: CAIP2,
      calls: [{ to: DEAD, value: '12345' }],
    })
    const { sendTransactionStatusId } = resultOf('eth_send_transaction', reply)
    // Committed; the worker took it and is broadcasting (held by the relay): kill now.
    for (let i = 0; relay.held.length === 0; i++) {
      if (i > 500) throw new Error('the first process never broadcast')
      await sleep(20)
    }
    await first.crash()
    first = undefined
    expect(await chain.balance(DEAD)).toBe(0n)

    relay.hold = false
    const second = await startService({ name: 'second', args })
    // The crashed worker's lease runs out, then the send is broadcast from the restarted process.
    let status: { txStatus: string; eth?: { txHash: string } } = { txStatus: 'PENDING' }
    const deadline = Date.now() + 120_000
    while (!['INCLUDED', 'FAILED'].includes(status.txStatus)) {
      if (Date.now() > deadline) throw new Error(`still ${status.txStatus}\n${second.stderr()}`)
      await sleep(200)
      const read = await root.query(second, 'get_send_transaction_status', { sendTransactionStatusId })
      expect(read.status).toBe(200)
      status = read.body
    }
    expect(status.txStatus).toBe('INCLUDED')
    expect(relay.forwarded).toEqual([relay.held[0]])
    expect(await chain.balance(DEAD)).toBe(12345n)
    // Some passes later, still exactly one broadcast.
    await sleep(1000)
    expect(relay.forwarded).toHaveLength(1)
    await second.stop()
    await close()
  })
})
