/**
 * Sign-out in one tab ends the session in every tab of the origin. Every tab runs its own session
 * timers and auto-refresh; once another tab had refreshed the session (new key K2 in the shared
 * IndexedDB, registered on the service), a sign-out here revoked only the key this tab's memory
 * still held (K1, already gone) and left K2 live on the service, in IndexedDB and in the other
 * tab. The sign-out now takes the key the persisted session holds.
 */
import { STAMP_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { logout } from '../../actions/auth/logout.ts'
import { refreshSession } from '../../actions/auth/refreshSession.ts'
import { getWhoami } from '../../actions/queries/getWhoami.ts'
import { apiKeyStamper } from '../../stampers/apiKeyStamper.ts'
import { createClientFixture } from '../../test/fixtures.ts'

describe('sign-out across tabs', () => {
  it('signing out in tab A leaves no live key of the session (tab B refreshed it earlier)', async () => {
    const fx = await createClientFixture({ session: { autoRefresh: false } })
    const tabA = fx.client
    const { sessions, organizationId } = await fx.signUpDirect()
    const session = sessions[0]!
    // Tab B: the same origin (same localStorage, same IndexedDB), opened after the sign-in.
    const tabB = fx.reload()
    await tabB.hydrate()
    expect(tabB.store.getState().status).toBe('active')
    // Tab B's auto-refresh (here by hand) renews the session: K1 -> K2.
    const refreshed = await refreshSession(tabB, { sessionId: session.id })
    const k2 = refreshed.publicKey as string
    expect(k2).not.toBe(session.publicKey)

    // The user clicks "Sign out" in tab A.
    await logout(tabA).catch(() => undefined)
    expect(tabA.store.getState().status).toBe('signed-out')

    // Secure behaviour: the session is over everywhere. K2 must not still work on the service...
    const key2 = await tabA.keyStore.get(k2)
    const body = JSON.stringify({ organizationId })
    const serviceAcceptsK2 = key2
      ? (
          await fx.harness.post('/public/v1/query/whoami', body, {
            [STAMP_HEADER]: (await apiKeyStamper(key2).stamp(body)).value,
          })
        ).status === 200
      : false
    // ...and tab B must not still act as the user.
    const tabBStillSigned = await getWhoami(tabB, {}).then(
      () => true,
      () => false,
    )
    expect({ k2InIndexedDb: key2 !== undefined, serviceAcceptsK2, tabBStillSigned }).toEqual({
      k2InIndexedDb: false,
      serviceAcceptsK2: false,
      tabBStillSigned: false,
    })
  })
})
