import { STAMP_HEADER } from '@latchkey/protocol'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createReadOnlySession } from '../actions/activities/createReadOnlySession.ts'
import { createWallet } from '../actions/activities/createWallet.ts'
import { logout } from '../actions/auth/logout.ts'
import { refreshSession } from '../actions/auth/refreshSession.ts'
import { getWhoami } from '../actions/queries/getWhoami.ts'
import { apiKeyStamper } from '../stampers/apiKeyStamper.ts'
import { createClientFixture } from '../test/fixtures.ts'
import { sessionsStorageKey } from './persistence.ts'
import { switchSession } from './sessions.ts'

/** Fake the clock but keep setImmediate real: fake-indexeddb schedules with it. */
const fakeTime = () =>
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })

afterEach(() => {
  vi.useRealTimers()
})

describe('sessions', () => {
  it('keeps several sessions, one active, and switches between them', async () => {
    const fx = await createClientFixture()
    const a = await fx.signUpDirect()
    const b = await fx.signUpDirect()
    const state = fx.client.store.getState()
    expect(Object.keys(state.sessions)).toHaveLength(2)
    expect(state.activeId).toBe(b.sessions[0]?.id)
    expect((await getWhoami(fx.client, {})).organizationId).toBe(b.organizationId)
    switchSession(fx.client, { sessionId: a.sessions[0]?.id as string })
    expect((await getWhoami(fx.client, {})).organizationId).toBe(a.organizationId)
    // A non-active session can still be used explicitly.
    expect((await getWhoami(fx.client, { sessionId: b.sessions[0]?.id })).organizationId).toBe(
      b.organizationId,
    )
  })

  it('warns, then expires ANY session (not only the active one) when auto-refresh is off', async () => {
    fakeTime()
    const fx = await createClientFixture({ session: { autoRefresh: false, warningLeadMs: 30_000 } })
    const a = await fx.signUpDirect({ lifetimeSeconds: 120 })
    const b = await fx.signUpDirect({ lifetimeSeconds: 600 })
    const statusOf = (id?: string) => fx.client.store.getState().sessions[id as string]?.status
    switchSession(fx.client, { sessionId: b.sessions[0]?.id as string })
    await vi.advanceTimersByTimeAsync(91_000)
    expect(statusOf(a.sessions[0]?.id)).toBe('expiring')
    expect(statusOf(b.sessions[0]?.id)).toBe('active')
    await vi.advanceTimersByTimeAsync(30_000)
    expect(statusOf(a.sessions[0]?.id)).toBe('expired')
    expect(fx.client.store.getState().status).toBe('active')
    switchSession(fx.client, { sessionId: a.sessions[0]?.id as string })
    expect(fx.client.store.getState().status).toBe('expired')
    await expect(getWhoami(fx.client, {})).rejects.toMatchObject({ code: 'SESSION_EXPIRED' })
  })

  it('refreshes a session shorter than the warning lead in its last quarter, not at once', async () => {
    fakeTime()
    const fx = await createClientFixture({ session: { warningLeadMs: 60_000 } })
    const { sessions } = await fx.signUpDirect({ lifetimeSeconds: 20 })
    const before = sessions[0]!
    const current = () => fx.client.store.getState().sessions[before.id]!
    await vi.advanceTimersByTimeAsync(1_000)
    // Less than the lead is left, so it says so, but it is not refreshed yet.
    expect(current().status).toBe('expiring')
    expect(current().publicKey).toBe(before.publicKey)
    await vi.advanceTimersByTimeAsync(14_500)
    const pending = fx.client.tasks.get(`refresh:${before.id}`)
    if (pending) await pending
    expect(current().publicKey).not.toBe(before.publicKey)
    expect(current().expiresAt).toBeGreaterThan(before.expiresAt)
    // The new 20 s session is as short as the old one: under the 60 s lead, it is `expiring` again
    // at once (its warning timer is armed with no delay). Whether that timer fired before the fake
    // clock stopped depends on how soon the refresh's real crypto resolved, and a timer armed while
    // the fake clock is advancing is due 1 ms later (fake-timers' `duringTick`): run it now.
    await vi.advanceTimersByTimeAsync(1)
    expect(current().status).toBe('expiring')
    expect(current().expiresAt).toBeGreaterThan(Date.now())
  })

  it('auto-refreshes at the warning time: new key via stamp_login, old key revoked', async () => {
    fakeTime()
    const fx = await createClientFixture({ session: { warningLeadMs: 60_000 } })
    const { sessions } = await fx.signUpDirect({ lifetimeSeconds: 300 })
    const before = sessions[0]!
    const oldKey = await fx.client.keyStore.get(before.publicKey as string)
    await vi.advanceTimersByTimeAsync(241_000)
    const pending = fx.client.tasks.get(`refresh:${before.id}`)
    if (pending) await pending
    const after = fx.client.store.getState().sessions[before.id]!
    expect(after.status).toBe('active')
    expect(after.publicKey).not.toBe(before.publicKey)
    // A new 300 s session from the refresh, at the warning time (240 s into the old one) or later.
    // Its `exp` counts whole seconds (the sign-up's expiry here has milliseconds), and the service
    // reads its clock somewhere between 240 and 241 s, as soon as the refresh's real crypto
    // resolves: so at least the whole second the warning time falls in, plus 300 s.
    expect(after.expiresAt).toBeGreaterThanOrEqual(
      Math.floor((before.expiresAt - 60_000) / 1000) * 1000 + 300_000,
    )
    expect(await fx.client.keyStore.get(before.publicKey as string)).toBeUndefined()
    // The old key is refused by the service, the new one works.
    const body = JSON.stringify({ organizationId: before.organizationId })
    const stamp = await apiKeyStamper(oldKey!).stamp(body)
    const reply = await fx.harness.post('/public/v1/query/whoami', body, { [stamp.header]: stamp.value })
    expect(reply.status).toBe(401)
    expect((await getWhoami(fx.client, {})).userId).toBe(before.userId)
    // And the new expiry is armed again.
    await vi.advanceTimersByTimeAsync(241_000)
    const again = fx.client.tasks.get(`refresh:${before.id}`)
    if (again) await again
    expect(fx.client.store.getState().sessions[before.id]?.status).toBe('active')
  })

  it('refreshSession can be called by hand and is shared by concurrent callers', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const [one, two] = await Promise.all([refreshSession(fx.client), refreshSession(fx.client)])
    expect(one).toBe(two)
  })

  it('logout revokes the key on the service (delete_api_keys) and deletes it locally', async () => {
    const fx = await createClientFixture()
    const { sessions, organizationId } = await fx.signUpDirect()
    const session = sessions[0]!
    const key = await fx.client.keyStore.get(session.publicKey as string)
    expect(await logout(fx.client)).toEqual({ sessionId: session.id, revoked: true })
    expect(fx.client.store.getState()).toMatchObject({ status: 'signed-out', activeId: null, sessions: {} })
    expect(await fx.client.keyStore.get(session.publicKey as string)).toBeUndefined()
    const body = JSON.stringify({ organizationId })
    const stamp = await apiKeyStamper(key!).stamp(body)
    const reply = await fx.harness.post('/public/v1/query/whoami', body, { [STAMP_HEADER]: stamp.value })
    expect(reply.status).toBe(401)
    await expect(getWhoami(fx.client, {})).rejects.toMatchObject({ code: 'NOT_SIGNED_IN' })
  })

  it('persists metadata only, restores it on reload, and marks a session whose key vanished storage-lost', async () => {
    const fx = await createClientFixture()
    const { sessions } = await fx.signUpDirect()
    const session = sessions[0]!
    const text = fx.storage.data.get(sessionsStorageKey(fx.harness.organizationId)) as string
    const persisted = JSON.parse(text)
    expect(persisted).toEqual({
      version: 1,
      activeId: session.id,
      sessions: [
        {
          id: session.id,
          sessionType: 'SESSION_TYPE_READ_WRITE',
          userId: session.userId,
          organizationId: session.organizationId,
          publicKey: session.publicKey,
          expiresAt: session.expiresAt,
          createdAt: session.createdAt,
          lifetimeSeconds: 900,
          method: 'api-key',
          label: 'User 1',
        },
      ],
    })
    const reloaded = fx.reload()
    await reloaded.hydrate()
    expect(reloaded.store.getState()).toMatchObject({
      status: 'active',
      activeId: session.id,
      hydrated: true,
    })
    expect((await getWhoami(reloaded, {})).userId).toBe(session.userId)

    await fx.client.keyStore.delete(session.publicKey as string)
    const evicted = fx.reload()
    await evicted.hydrate()
    expect(evicted.store.getState().status).toBe('storage-lost')
    await expect(getWhoami(evicted, {})).rejects.toMatchObject({ code: 'NOT_SIGNED_IN' })
  })

  it('ignores persisted sessions of another version or shape', async () => {
    const fx = await createClientFixture()
    fx.storage.setItem(
      sessionsStorageKey(fx.harness.organizationId),
      JSON.stringify({ version: 0, sessions: [{}] }),
    )
    await fx.client.hydrate()
    expect(fx.client.store.getState()).toMatchObject({ status: 'signed-out', sessions: {} })
  })

  it('keeps read-only sessions in memory only; they read but cannot submit', async () => {
    const fx = await createClientFixture()
    const { organizationId } = await fx.signUpDirect()
    const { session } = await createReadOnlySession(fx.client)
    expect(session).toMatchObject({ sessionType: 'SESSION_TYPE_READ_ONLY', organizationId, status: 'active' })
    expect(fx.client.store.getState().activeId).not.toBe(session.id)
    expect((await getWhoami(fx.client, { sessionId: session.id })).organizationId).toBe(organizationId)
    await expect(createWallet(fx.client, { walletName: 'no', sessionId: session.id })).rejects.toMatchObject({
      code: 'READ_ONLY_SESSION',
    })
    const text = fx.storage.data.get(sessionsStorageKey(fx.harness.organizationId)) as string
    expect(text).not.toContain(session.id)
    expect(text).not.toContain(fx.client.tokens.get(session.id))
  })

  it('nothing secret reaches storage, and private keys are non-extractable', async () => {
    const fx = await createClientFixture()
    const { sessions } = await fx.signUpDirect()
    const key = await fx.client.keyStore.get(sessions[0]?.publicKey as string)
    expect(key?.privateKey.extractable).toBe(false)
    await expect(crypto.subtle.exportKey('pkcs8', key!.privateKey)).rejects.toThrow()
    await expect(crypto.subtle.exportKey('jwk', key!.privateKey)).rejects.toThrow()
    const everything = [...fx.storage.data.values()].join('\n')
    expect(everything).not.toMatch(/"d"|privateKey|pkcs8|BEGIN|token/i)
  })
})
