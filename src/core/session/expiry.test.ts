import { afterEach, describe, expect, it, vi } from 'vitest'
import { NetworkError, SessionExpiredError } from '../errors.ts'
import { getWalletAccountsQueryOptions } from '../query/getWalletAccounts.ts'
import { retryUnlessSessionEnded } from '../query/utils.ts'
import { createClientFixture } from '../test/fixtures.ts'
import { getActiveSession, getSession, getSessionStatus } from './sessions.ts'

/** Fake the clock but keep setImmediate real: fake-indexeddb schedules with it. */
const fakeTime = () =>
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })

afterEach(() => {
  vi.useRealTimers()
})

describe('session expiry is a state', () => {
  it('at the expiry instant the store says expired and getSession() stops returning the session', async () => {
    fakeTime()
    const fx = await createClientFixture({ session: { autoRefresh: false, warningLeadMs: 2_000 } })
    const { sessions } = await fx.signUpDirect({ lifetimeSeconds: 5 })
    const id = sessions[0]!.id
    // What a subscriber hears, with nobody reading the store in between: the timer moves it.
    const heard: string[] = []
    fx.client.store.subscribe((state) => heard.push(state.status))

    expect([getSession(fx.client)?.id, getSessionStatus(fx.client)]).toEqual([id, 'active'])
    await vi.advanceTimersByTimeAsync(3_000)
    expect([getSession(fx.client)?.id, getSessionStatus(fx.client)]).toEqual([id, 'expiring'])
    await vi.advanceTimersByTimeAsync(1_999)
    expect(getSession(fx.client)?.id).toBe(id)
    await vi.advanceTimersByTimeAsync(1)
    expect(heard).toEqual(['expiring', 'expired'])
    expect(getSession(fx.client)).toBeUndefined()
    expect(getSession(fx.client, { sessionId: id })).toBeUndefined()
    expect(getSessionStatus(fx.client)).toBe('expired')
    expect(getSessionStatus(fx.client, { sessionId: id })).toBe('expired')
    // The record stays (the app can say whose session ended), marked as such.
    expect(getActiveSession(fx.client)).toMatchObject({ id, status: 'expired' })
  })

  it('a query of an expired session runs and fails at once with SessionExpiredError, without a request', async () => {
    fakeTime()
    const fx = await createClientFixture({ session: { autoRefresh: false } })
    const { sessions } = await fx.signUpDirect({ lifetimeSeconds: 5 })
    const id = sessions[0]!.id
    const live = getWalletAccountsQueryOptions(fx.client)
    expect(live.enabled).toBe(true)
    await vi.advanceTimersByTimeAsync(5_000)
    const ended = getWalletAccountsQueryOptions(fx.client)
    // Enabled (a disabled query would wait forever) under a key of its own, so the data read while
    // the session was live is not shown as if it still were.
    expect(ended.enabled).toBe(true)
    expect(ended.queryKey).toEqual([
      'latchkey',
      'walletAccounts',
      { sessionId: id, organizationId: sessions[0]!.organizationId, sessionStatus: 'expired' },
    ])
    expect(ended.queryKey).not.toEqual(live.queryKey)
    const fetch = vi.spyOn(fx.client.config, 'fetch')
    const error = await ended.queryFn({ signal: new AbortController().signal }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionExpiredError)
    expect(error).toMatchObject({
      name: 'SessionExpiredError',
      code: 'SESSION_EXPIRED',
      details: { sessionId: id },
    })
    expect(fetch).not.toHaveBeenCalled()
    // Retrying cannot bring it back: the hooks show the error at once.
    const retry = retryUnlessSessionEnded(undefined)
    expect([retry(0, error as SessionExpiredError), retry(0, new SessionExpiredError(id))]).toEqual([
      false,
      false,
    ])
  })

  it('signed out, a query waits for a sign-in; other errors keep the caller’s retry', async () => {
    const fx = await createClientFixture()
    await fx.client.hydrate()
    expect(getSessionStatus(fx.client)).toBe('signed-out')
    expect(getWalletAccountsQueryOptions(fx.client).enabled).toBe(false)
    const other = new NetworkError('http://127.0.0.1:1/')
    expect([0, 2, 3].map((n) => retryUnlessSessionEnded(undefined)(n, other))).toEqual([true, true, false])
    expect(retryUnlessSessionEnded(false)(0, other)).toBe(false)
    expect(retryUnlessSessionEnded((n) => n < 1)(0, other)).toBe(true)
  })
})
