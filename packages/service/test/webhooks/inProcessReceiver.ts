import type { WebhookEventBody } from '@latchkey/protocol'
import { afterEach } from 'vitest'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import type { WebhookRequest, WebhookResponse } from '../../src/webhooks/WebhooksOptions.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

/**
 * A harness delivering webhooks over an in-process transport (no sockets): `answer` decides each request's status and
 * may await anything (to force an interleaving while a try is in flight).
 */
export async function setUp(options: CreateServiceOptions['webhooks'] = {}) {
  const sent: WebhookEventBody[] = []
  const hooks: { answer: (index: number, request: WebhookRequest) => Promise<number> | number } = {
    answer: () => 200,
  }
  let requests = 0
  const transport = async (request: WebhookRequest): Promise<WebhookResponse> => {
    const index = requests++
    const status = await hooks.answer(index, request)
    if (status < 300) sent.push(JSON.parse(new TextDecoder().decode(request.body)))
    return { status, body: '' }
  }
  const h = await createHarness({
    webhooks: { transport, ...options },
    jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
  })
  harnesses.push(h)
  const endpoint = async () =>
    resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', {
        url: 'http://127.0.0.1:9/hook',
        name: 'app',
        subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
      }),
    )
  const flush = async () => {
    for (let round = 0; round < 50; round++) {
      await h.service.runtime.jobs.idle()
      if ((await h.service.runtime.jobs.runDue()) === 0) {
        await h.service.runtime.jobs.idle()
        if ((await h.service.runtime.jobs.runDue()) === 0) return
      }
    }
  }
  const wallet = async (name: string) => {
    h.clock.advance(1)
    const reply = await h.submit('create_wallet', { walletName: name, accounts: [] })
    if (reply.status !== 200) throw new Error(`create_wallet ${reply.status}`)
  }
  return { h, sent, hooks, endpoint, flush, wallet, requests: () => requests }
}
