import { QueryClient } from '@tanstack/react-query'
import { act, renderHook, waitFor } from '@testing-library/react'
import { type ReactNode, useState } from 'react'
import { describe, expect, it } from 'vitest'
import type { Latchkey } from '../core/createLatchkey.ts'
import { createClientFixture } from '../core/test/fixtures.ts'
import { recordedSendService } from '../core/test/recordedSendService.ts'
import {
  LatchkeyProvider,
  useCallsStatus,
  useSendCalls,
  useSendTransaction,
  useSpendingLimits,
} from './index.ts'

const FROM = '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4'
const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const HASH = `0x${'12'.repeat(32)}`

function wrapperOf(client: Latchkey) {
  return function Providers({ children }: { children: ReactNode }) {
    const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { retry: false } } }))
    return (
      <LatchkeyProvider client={client} queryClient={queryClient}>
        {children}
      </LatchkeyProvider>
    )
  }
}

describe('useSendCalls, useSendTransaction and useCallsStatus (published send shapes, local service)', () => {
  it('sends, then polls the status until it is final and stops', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const send = recordedSendService(fx.harness.service.fetch as typeof fetch, () => [
      { txStatus: 'PENDING' },
      { txStatus: 'BROADCASTED', eth: { txHash: HASH } },
      { txStatus: 'INCLUDED', eth: { txHash: HASH } },
    ])
    const client = fx.reload({ fetch: send.fetch })
    const { result } = renderHook(
      () => {
        const sendCalls = useSendCalls()
        const sendTransaction = useSendTransaction()
        const status = useCallsStatus({
          sendTransactionStatusId: sendCalls.data?.sendTransactionStatusId,
          pollingIntervalMs: 15,
        })
        return { sendCalls, sendTransaction, status }
      },
      { wrapper: wrapperOf(client) },
    )
    // Disabled until there is something to follow.
    expect(result.current.status.fetchStatus).toBe('idle')
    await act(() =>
      result.current.sendCalls.mutateAsync({
        from: FROM,
        caip2: 'eip155:31337',
        sponsor: true,
        calls: [{ to: TO, value: '1' }, { to: TO }],
      }),
    )
    await waitFor(() => expect(result.current.status.data?.final).toBe(true), { timeout: 5_000 })
    expect(result.current.status.data).toEqual({
      txStatus: 'INCLUDED',
      eth: { txHash: HASH },
      status: 'success',
      final: true,
    })
    const id = result.current.sendCalls.data?.sendTransactionStatusId as string
    const reads = send.reads.get(id)
    expect(reads).toBe(3)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(send.reads.get(id)).toBe(reads)

    await act(() => result.current.sendTransaction.mutateAsync({ from: FROM, caip2: 'eip155:1', to: TO }))
    expect(send.sends.map((s) => s.parameters)).toEqual([
      { from: FROM, caip2: 'eip155:31337', sponsor: true, calls: [{ to: TO, value: '1' }, { to: TO }] },
      { from: FROM, caip2: 'eip155:1', calls: [{ to: TO }] },
    ])
  })

  it('reads the spending limits again once a send is final (its fee then counts as paid, not at its most)', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const send = recordedSendService(fx.harness.service.fetch as typeof fetch, () => [
      { txStatus: 'BROADCASTED', eth: { txHash: HASH } },
      { txStatus: 'BROADCASTED', eth: { txHash: HASH } },
      { txStatus: 'INCLUDED', eth: { txHash: HASH } },
    ])
    let limitReads = 0
    const counting: typeof fetch = (input, init) => {
      if (
        String(input instanceof Request ? input.url : input).endsWith('/query/latchkey_list_spending_limits')
      )
        limitReads++
      return send.fetch(input, init)
    }
    const client = fx.reload({ fetch: counting })
    const { result } = renderHook(
      () => {
        const sendCalls = useSendCalls()
        const limits = useSpendingLimits()
        const status = useCallsStatus({
          sendTransactionStatusId: sendCalls.data?.sendTransactionStatusId,
          pollingIntervalMs: 15,
        })
        return { sendCalls, limits, status }
      },
      { wrapper: wrapperOf(client) },
    )
    await waitFor(() => expect(result.current.limits.isSuccess).toBe(true))
    await act(() =>
      result.current.sendCalls.mutateAsync({
        from: FROM,
        caip2: 'eip155:31337',
        calls: [{ to: TO, value: '1' }],
      }),
    )
    // The send itself made the limits stale (its reservation): read again once.
    await waitFor(() => expect(limitReads).toBe(2))
    expect(result.current.status.data?.final).not.toBe(true)
    await waitFor(() => expect(result.current.status.data?.final).toBe(true), { timeout: 5_000 })
    await waitFor(() => expect(limitReads).toBe(3))
    // And not again while nothing changes.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(limitReads).toBe(3)
  })
})
