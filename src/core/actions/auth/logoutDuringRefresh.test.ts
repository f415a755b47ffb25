/**
 * `logout` while a `refreshSession` of the same session is in flight (the session timers start one
 * near expiry with `session.autoRefresh`) waits for it and revokes the key it registered: once it
 * revoked only the old key, leaving the refresh's new one live on the service and in the key store
 * after "sign out". A refresh that starts while the logout is under way (the timer fires during its
 * revocation) is refused: it too would register a key that outlives the sign-out.
 */
import { describe, expect, it } from 'vitest'
import { apiKeyStamper } from '../../stampers/apiKeyStamper.ts'
import { createClientFixture } from '../../test/fixtures.ts'
import { query } from '../../transport/activity.ts'
import { logout } from './logout.ts'
import { refreshSession } from './refreshSession.ts'

/** The keys left in the device's key store, and how many of them still sign in as `userId`. */
async function leftAfterSignOut(
  fx: Awaited<ReturnType<typeof createClientFixture>>,
  organizationId: string,
  userId: string,
): Promise<{ keysLeft: number; liveCredentials: number }> {
  const left = await fx.client.keyStore.list()
  let live = 0
  for (const key of left)
    if (
      await query(fx.client, 'whoami', { organizationId }, { stamper: apiKeyStamper(key) }).then(
        (who) => who.userId === userId,
        () => false,
      )
    )
      live++
  return { keysLeft: left.length, liveCredentials: live }
}

describe('logout removes every session key', () => {
  it('a refresh racing a logout leaves no usable key behind', async () => {
    // The network as it usually is: the refresh's `stamp_login`, sent first, is answered before
    // the logout's `delete_api_keys` (which comes after a `get_api_keys` round trip) arrives.
    let serviceFetch: typeof fetch | undefined
    let stampLoginAnswered: () => void = () => undefined
    const answered = new Promise<void>((resolve) => {
      stampLoginAnswered = resolve
    })
    const orderedFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input)
      if (url.endsWith('/submit/delete_api_keys')) await answered
      const response = await (serviceFetch as typeof fetch)(input, init)
      if (url.endsWith('/submit/stamp_login')) stampLoginAnswered()
      return response
    }) as typeof fetch
    const fx = await createClientFixture({ fetch: orderedFetch })
    serviceFetch = fx.harness.service.fetch as typeof fetch
    const { organizationId, userIds } = await fx.signUpDirect()
    const before = (await fx.client.keyStore.list()).map((k) => k.publicKey)
    expect(before).toHaveLength(1)

    // The refresh is under way (e.g. the auto-refresh timer fired) when the person signs out.
    const refreshing = refreshSession(fx.client).catch((error: Error) => error)
    const loggedOut = await logout(fx.client)
    const refreshed = await refreshing
    expect(refreshed).not.toBeInstanceOf(Error)
    expect(loggedOut.revoked).toBe(true)
    expect(Object.keys(fx.client.store.getState().sessions)).toEqual([])

    // What is left on this device after "sign out": no key, and none that still signs in as the user.
    expect(await leftAfterSignOut(fx, organizationId, userIds[0]!)).toEqual({
      keysLeft: 0,
      liveCredentials: 0,
    })
  })

  it('a refresh that starts while the logout is under way is refused and leaves no key', async () => {
    let serviceFetch: typeof fetch | undefined
    let reachedDelete: () => void = () => undefined
    const deleting = new Promise<void>((resolve) => {
      reachedDelete = resolve
    })
    let releaseDelete: () => void = () => undefined
    const released = new Promise<void>((resolve) => {
      releaseDelete = resolve
    })
    const heldFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input)
      if (url.endsWith('/submit/delete_api_keys')) {
        reachedDelete()
        await released
      }
      return (serviceFetch as typeof fetch)(input, init)
    }) as typeof fetch
    const fx = await createClientFixture({ fetch: heldFetch })
    serviceFetch = fx.harness.service.fetch as typeof fetch
    const { organizationId, userIds } = await fx.signUpDirect()

    // The logout is revoking the key when the refresh starts.
    const loggingOut = logout(fx.client)
    await deleting
    const refreshed = await refreshSession(fx.client).catch((error: Error) => error)
    releaseDelete()
    expect((await loggingOut).revoked).toBe(true)
    expect(refreshed).toBeInstanceOf(Error)
    expect((refreshed as Error & { code?: string }).code).toBe('NOT_SIGNED_IN')

    expect(await leftAfterSignOut(fx, organizationId, userIds[0]!)).toEqual({
      keysLeft: 0,
      liveCredentials: 0,
    })
  })
})
