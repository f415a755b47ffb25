import { QueryClient } from '@tanstack/react-query'
import { act, renderHook } from '@testing-library/react'
import { type ReactNode, useState } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createClientFixture } from '../core/test/fixtures.ts'
import {
  LatchkeyProvider,
  SessionExpiredError,
  useSession,
  useSessionStatus,
  useSignMessage,
  useUser,
  useWalletAccounts,
} from './index.ts'

type Fixture = Awaited<ReturnType<typeof createClientFixture>>

/** Fake the clock but keep setImmediate real: fake-indexeddb schedules with it. */
const fakeTime = () =>
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })

afterEach(() => {
  vi.useRealTimers()
})

// TanStack's defaults (three retries with backoff): an ended session must not wait on them.
const wrapperOf =
  (fx: Fixture) =>
  ({ children }: { children: ReactNode }) => {
    const [queryClient] = useState(() => new QueryClient())
    return (
      <LatchkeyProvider client={fx.client} queryClient={queryClient}>
        {children}
      </LatchkeyProvider>
    )
  }

describe('an expired session in the hooks', () => {
  it('useSession() turns undefined at the expiry instant; the queries fail with SessionExpiredError', async () => {
    fakeTime()
    const fx = await createClientFixture({ session: { autoRefresh: false, warningLeadMs: 1_000 } })
    const { sessions } = await fx.signUpDirect({ lifetimeSeconds: 5 })
    const { result } = renderHook(
      () => ({
        session: useSession(),
        status: useSessionStatus(),
        accounts: useWalletAccounts(),
        user: useUser(),
        sign: useSignMessage(),
      }),
      { wrapper: wrapperOf(fx) },
    )
    await vi.waitFor(() => expect(result.current.accounts.isSuccess).toBe(true))
    expect([result.current.session?.id, result.current.status]).toEqual([sessions[0]!.id, 'active'])

    // Nothing re-renders the component: the expiry timer alone moves it.
    await act(() => vi.advanceTimersByTimeAsync(5_000 - (Date.now() - sessions[0]!.createdAt)))
    expect(result.current.session).toBeUndefined()
    expect(result.current.status).toBe('expired')
    // The queries leave the waiting (or the data read while live) for the named error, at once:
    // no retries with backoff first (only TanStack's notification tick passes).
    await act(() => vi.advanceTimersByTimeAsync(10))
    for (const query of [result.current.accounts, result.current.user]) {
      expect(query.status).toBe('error')
      expect(query.data).toBeUndefined()
      expect(query.error).toBeInstanceOf(SessionExpiredError)
      expect(query.error).toMatchObject({
        code: 'SESSION_EXPIRED',
        message: 'The session has expired; sign in again',
      })
    }
    // A mutation too.
    const signed = await result.current.sign
      .mutateAsync({ signWith: '0x0000000000000000000000000000000000000001', message: 'hi' })
      .catch((error: unknown) => error)
    expect(signed).toBeInstanceOf(SessionExpiredError)
  })
})
