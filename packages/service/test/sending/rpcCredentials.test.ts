// An operator's `[rpc]` URL may carry credentials (`https://user:password@host/…`, or a provider's
// key in its path or query): they reach the node as HTTP Basic authorization and nothing of the
// URL, nor any upstream text that might quote it or a part of it, reaches a caller's answer, a
// send's stored status or a log line.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServiceLogger } from '../../src/kernel/base/ServiceLogger.ts'
import { logSink } from '../../src/observability/logger.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
} from '../../src/testing/harness.ts'
import {
  type Chain,
  endUser,
  erc20Call,
  receiptOf,
  sponsoredService,
  startChain,
  waitForSend,
} from './sendSupport.ts'

const CAIP2 = 'eip155:31337'
const PASSWORD = 's3cret-Pa55'
const DEAD = '0x000000000000000000000000000000000000dead'

let node: Server
let nodeUrl: string
let closedPort: number
const authorizations: (string | undefined)[] = []

/**
 * A node behind Basic authorization: without it, an HTML 401 quoting the URL; with it,
 * `eth_chainId` answers and every other method fails with a message that quotes the URL.
 */
beforeAll(async () => {
  node = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const { id, method } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      id: number
      method: string
    }
    authorizations.push(request.headers.authorization)
    const expected = `Basic ${Buffer.from(`latchkey:${PASSWORD}`).toString('base64')}`
    if (request.headers.authorization !== expected) {
      response.statusCode = 401
      response.end(`<html>401: no access to ${nodeUrl}</html>`)
      return
    }
    response.setHeader('content-type', 'application/json')
    response.end(
      JSON.stringify(
        method === 'eth_chainId'
          ? { jsonrpc: '2.0', id, result: '0x7a69' }
          : {
              jsonrpc: '2.0',
              id,
              error: {
                code: -32000,
                message: `upstream http://latchkey:${PASSWORD}@10.1.2.3:8545/rpc failed`,
              },
            },
      ),
    )
  })
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve))
  nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`
  // A port nothing listens on: the node that cannot be reached.
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  closedPort = (probe.address() as AddressInfo).port
  await new Promise((resolve) => probe.close(resolve))
})

afterAll(async () => {
  await new Promise((resolve) => node?.close(resolve))
})

/** Every log line the service writes, as text. */
function capturingLogger(): { logger: ServiceLogger; lines: string[] } {
  const lines: string[] = []
  const line = (level: string) => (fields: object, message?: string) => {
    lines.push(
      `${level} ${message ?? ''} ${JSON.stringify(fields, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`,
    )
  }
  return {
    lines,
    logger: { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') },
  }
}

async function service(rpcUrl: string): Promise<{ h: Harness; lines: string[]; from: string }> {
  const { logger, lines } = capturingLogger()
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    rpc: { [CAIP2]: rpcUrl },
    sending: { rpcTimeoutMs: 2_000, worker: false },
    logger,
    events: logSink(logger),
  })
  const { addresses } = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] }),
  )
  return { h, lines, from: addresses[0] as string }
}

const withCredentials = (url: string) => url.replace('http://', `http://latchkey:${PASSWORD}@`)

describe('RPC credentials stay with the operator', () => {
  it('a node that cannot be reached: RPC_FAILED, and neither the answer nor a log line quotes the URL or the password', async () => {
    const url = withCredentials(`http://127.0.0.1:${closedPort}/v1/key`)
    const { h, lines, from } = await service(url)
    h.clock.set(Date.now())
    const sent = await h.submit('eth_send_transaction', {
      from,
      caip2: CAIP2,
      calls: [{ to: DEAD, value: '1' }],
    })
    const nonces = await h.query('get_nonces', { address: from, caip2: CAIP2, nonce: true })
    for (const reply of [sent, nonces]) {
      expect(reply.status).toBe(503)
      expect(reply.body.details.errorCode).toBe('RPC_FAILED')
      expect(reply.body.message).toMatch(/could not be reached/)
      const text = JSON.stringify(reply.body)
      for (const secret of [PASSWORD, `${closedPort}`, 'latchkey:', '/v1/key'])
        expect(text).not.toContain(secret)
    }
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines)
      for (const secret of [PASSWORD, `:${closedPort}`, '/v1/key']) expect(line).not.toContain(secret)
    await h.service.close()
  })

  it('credentials in the URL reach the node as Basic authorization; a node error quoting a URL is passed on without it', async () => {
    const { h, lines, from } = await service(withCredentials(`${nodeUrl}/`))
    authorizations.length = 0
    h.clock.set(Date.now())
    const sent = await h.submit('eth_send_transaction', {
      from,
      caip2: CAIP2,
      calls: [{ to: DEAD, value: '1' }],
    })
    // eth_chainId passed (authorized); the next call's refusal is the node's, its URL cut out.
    expect(authorizations.length).toBeGreaterThan(1)
    expect(sent.status).toBe(400)
    expect(sent.body.details).toMatchObject({ errorCode: 'TRANSACTION_INVALID', field: 'parameters.calls' })
    expect(sent.body.message).toContain('upstream <url> failed')
    for (const line of [JSON.stringify(sent.body), ...lines]) {
      expect(line).not.toContain(PASSWORD)
      expect(line).not.toContain('10.1.2.3')
    }
    await h.service.close()
  })

  it('a node answering without JSON-RPC (an HTML 401 quoting its URL): RPC_FAILED with the status only', async () => {
    const { h, lines } = await service(`${nodeUrl}/`)
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'X', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const reply = await h.query('get_nonces', { address: addresses[0], caip2: CAIP2, nonce: true })
    expect(reply.status).toBe(503)
    expect(reply.body).toMatchObject({ details: { errorCode: 'RPC_FAILED' } })
    expect(reply.body.message).toMatch(/HTTP 401 without a JSON-RPC body/)
    for (const line of [JSON.stringify(reply.body), ...lines]) expect(line).not.toContain(nodeUrl)
    await h.service.close()
  })
})

describe("a node's refusal quoting the provider's key in the URL's path", () => {
  const KEY = 'k3yInPath-0f9e8d7c6b'
  let chain: Chain
  /** The methods the gateway refuses (a quota that ran out for those calls). */
  const refused = new Set<string>()

  beforeAll(async () => {
    chain = await startChain()
  }, 60_000)

  afterAll(async () => {
    await chain?.node.close()
  })

  /**
   * A provider in front of anvil, reached at `<anvil>/v2/<KEY>`: the methods in `refused` are
   * refused in a gateway's words quoting the key and the path (no scheme, no URL), the others
   * passed to anvil.
   */
  const gateway: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id: number; method: string }
    if (new URL(String(input)).pathname === `/v2/${KEY}` && refused.has(body.method)) {
      const message = `daily request quota exceeded for API key ${KEY} (POST /v2/${KEY})`
      return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32005, message } }))
    }
    return fetch(`${chain.url}/`, init)
  }

  it('reaches no end user and no log line: the refusal when prepared, the send status, get_nonces', async () => {
    const { logger, lines } = capturingLogger()
    const h = await sponsoredService(
      { ...chain, url: `${chain.url}/v2/${KEY}` },
      {},
      {},
      { fetch: gateway, logger, events: logSink(logger) },
    )
    const user = await endUser(h)
    const calls = [erc20Call('mint', user.from, 1n)]
    const quoted = 'daily request quota exceeded for API key <redacted> (POST <redacted>)'

    refused.add('eth_estimateGas')
    const prepared = await user.send({ sponsor: true, calls })
    expect(prepared.status).toBe(400)
    expect(prepared.body.details).toMatchObject({
      errorCode: 'TRANSACTION_INVALID',
      field: 'parameters.calls',
    })
    expect(prepared.body.message).toContain(quoted)
    refused.clear()

    refused.add('eth_sendRawTransaction')
    const sent = await user.send({ sponsor: true, calls })
    expect(sent.status).toBe(200)
    const id = resultOf('eth_send_transaction', sent).sendTransactionStatusId as string
    const status = await waitForSend(h, id, { organizationId: user.organizationId, as: user.as as never })
    expect(status).toMatchObject({
      txStatus: 'FAILED',
      txError: `the node refused the transaction: ${quoted}`,
    })

    refused.add('eth_getTransactionCount')
    const nonces = await h.query(
      'get_nonces',
      { organizationId: user.organizationId, address: user.from, caip2: CAIP2, nonce: true },
      user.as as never,
    )
    expect(nonces.status).toBe(503)
    expect(nonces.body).toMatchObject({ details: { errorCode: 'RPC_FAILED' } })
    expect(nonces.body.message).toContain(quoted)

    const rows = await h.service.store.all('sendTransactions')
    const seen = [prepared.body, status, nonces.body, rows].map((answer) => JSON.stringify(answer))
    for (const text of [...seen, ...lines]) expect(text).not.toContain(KEY)
    await h.service.close()
  }, 60_000)
})

// The redaction of the URL's parts is for what is shown: a URL whose query value (6+ characters)
// is a word of "already known" shows the node's "already known" as "<redacted> known", and the
// sender classifies on the node's own words, so the send it has is tracked, not failed.
describe('a URL part that is a word of a refusal', () => {
  let chain: Chain
  beforeAll(async () => {
    chain = await startChain()
  }, 60_000)
  afterAll(async () => {
    await chain?.node.close()
  })

  /**
   * A gateway in front of anvil that hands every raw transaction to anvil (which mines it) and
   * answers as a node that already had it: "already known" (a load-balanced provider whose other
   * backend got it first; geth's words for a transaction in its pool).
   */
  const hashes: string[] = []
  const gateway: typeof fetch = async (_input, init) => {
    const body = JSON.parse(String(init?.body)) as { id: number; method: string }
    const forwarded = await fetch(`${chain.url}/`, init)
    if (body.method !== 'eth_sendRawTransaction') return forwarded
    const answer = (await forwarded.json()) as { result?: string }
    if (answer.result) hashes.push(answer.result)
    return new Response(
      JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32000, message: 'already known' } }),
    )
  }

  async function sendThrough(url: string) {
    hashes.length = 0
    const h = await sponsoredService({ ...chain, url }, {}, {}, { fetch: gateway })
    const user = await endUser(h)
    const sent = await user.send({ sponsor: true, calls: [erc20Call('mint', user.from, 1n)] })
    expect(sent.status).toBe(200)
    const id = resultOf('eth_send_transaction', sent).sendTransactionStatusId as string
    const status = await waitForSend(h, id, { organizationId: user.organizationId, as: user.as as never })
    const receipt = (await receiptOf(chain, hashes[0]!)) as { status: string }
    const sponsor = sponsorAddress(h.service.runtime)!.toLowerCase()
    const counter = (await h.service.store.all('nonces')).find((row) => row.id === `${CAIP2}|${sponsor}`) as
      | { next: string }
      | undefined
    await h.service.close()
    return { status, receipt, sponsorNext: counter?.next }
  }

  for (const url of ['/v2/k3yInPath-0f9e8d7c6b', '/v2/k3yInPath-0f9e8d7c6b?tag=already'])
    it(`URL ${url}: the "already known" send mined on chain is tracked and INCLUDED, its nonce kept`, async () => {
      const { status, receipt, sponsorNext } = await sendThrough(`${chain.url}${url}`)
      expect(receipt.status).toBe('0x1')
      expect({ txStatus: status.txStatus, sponsorNext }).toEqual({ txStatus: 'INCLUDED', sponsorNext: '1' })
    }, 60_000)
})
