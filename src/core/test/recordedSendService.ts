/**
 * The service's send path as the published API answers it (`@turnkey/http` 6.6 shapes:
 * `ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2` → `ethSendTransactionResultV2.sendTransactionStatusId`,
 * `get_send_transaction_status` → `{ txStatus, eth: { txHash }, txError }`), in front of the real
 * local service for everything else. Kit tests use it until the local service sends transactions
 * itself; each send's statuses are scripted by the test (`statuses`) or by `onSend`.
 */

import type { SendTransactionStatus } from '@latchkey/protocol'

export interface RecordedSend {
  path: 'eth_send_transaction' | 'sol_send_transaction'
  type: string
  organizationId: string
  parameters: Record<string, unknown>
  /** The request was stamped (an `X-Stamp` or session header was present). */
  stamped: boolean
  sendTransactionStatusId: string
}

export interface RecordedSendService {
  fetch: typeof fetch
  sends: RecordedSend[]
  /** Status reads answered so far, by send id. */
  reads: Map<string, number>
  /** The statuses a send's reads return in turn; the last one repeats. */
  statuses: Map<string, SendTransactionStatus[]>
}

const SUBMIT = /\/public\/v1\/submit\/(eth_send_transaction|sol_send_transaction)$/
const STATUS = /\/public\/v1\/query\/get_send_transaction_status$/

export function recordedSendService(
  service: typeof fetch,
  onSend: (send: RecordedSend) => SendTransactionStatus[] | Promise<SendTransactionStatus[]> = () => [
    { txStatus: 'INCLUDED', eth: { txHash: `0x${'ab'.repeat(32)}` } },
  ],
): RecordedSendService {
  const sends: RecordedSend[] = []
  const reads = new Map<string, number>()
  const statuses = new Map<string, SendTransactionStatus[]>()
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

  const fake = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init)
    const { pathname } = new URL(request.url)
    const submit = SUBMIT.exec(pathname)
    if (submit) {
      const body = JSON.parse(await request.text()) as {
        type: string
        organizationId: string
        parameters: Record<string, unknown>
      }
      const path = submit[1] as RecordedSend['path']
      const send: RecordedSend = {
        path,
        type: body.type,
        organizationId: body.organizationId,
        parameters: body.parameters,
        stamped: request.headers.has('x-stamp') || request.headers.has('x-session'),
        sendTransactionStatusId: crypto.randomUUID(),
      }
      sends.push(send)
      statuses.set(send.sendTransactionStatusId, await onSend(send))
      const now = { seconds: String(Math.floor(Date.now() / 1000)), nanos: '0' }
      const prefix = path === 'eth_send_transaction' ? 'ethSendTransaction' : 'solSendTransaction'
      return json({
        activity: {
          id: crypto.randomUUID(),
          organizationId: body.organizationId,
          status: 'ACTIVITY_STATUS_COMPLETED',
          type: body.type,
          intent: { [`${prefix}IntentV2`]: body.parameters },
          result: { [`${prefix}ResultV2`]: { sendTransactionStatusId: send.sendTransactionStatusId } },
          votes: [],
          fingerprint: `sha256:${send.sendTransactionStatusId}`,
          canApprove: false,
          canReject: false,
          createdAt: now,
          updatedAt: now,
        },
      })
    }
    if (STATUS.test(pathname)) {
      const { sendTransactionStatusId } = JSON.parse(await request.text()) as {
        sendTransactionStatusId: string
      }
      const script = statuses.get(sendTransactionStatusId)
      if (!script)
        return json({ code: 5, message: `send ${sendTransactionStatusId} not found`, details: [] }, 404)
      const count = reads.get(sendTransactionStatusId) ?? 0
      reads.set(sendTransactionStatusId, count + 1)
      return json(script[Math.min(count, script.length - 1)])
    }
    return service(request)
  }) as typeof fetch
  return { fetch: fake, sends, reads, statuses }
}
