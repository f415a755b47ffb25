// An operator's `[rpc]` URL may carry credentials (`https://user:password@host/…`): they reach the
// node as HTTP Basic authorization and nothing of the URL, nor any upstream text that might quote
// it, reaches a caller's answer or a log line.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServiceLogger } from '../../src/kernel/base/ServiceLogger.ts'
import { logSink } from '../../src/observability/logger.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
} from '../../src/testing/harness.ts'

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
