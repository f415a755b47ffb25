// A request let in (its stamp verified against a key that still existed) whose credential is
// removed before its activity's transaction runs: a thief holding a session key, flooding
// requests while the owner signs out. The request once ran as the key all the same:
// create_read_only_session found no key row and signed a token bound to nothing, which read the
// organization for an hour after the logout; stamp_login and create_api_keys minted a session or
// a key that outlived it. Now the activity's transaction reads the caller's credential again and
// refuses (401 PUBLIC_KEY_NOT_FOUND, as a new request would be), and a read-only session is never
// made without the binding that ends it with its key.
//
// The interleaving is forced: the logout is submitted when the racing request enters its
// activity transaction (`beforeNextTransaction`), after its admission.
import { describe, expect, it } from 'vitest'
import { createHarness, type Reply, resultOf, testKey } from '../../src/testing/harness.ts'
import { lists, readOnly, refusal, signedIn, submitRacing } from './inFlight.ts'
import { twoDevices } from './twoDevices.ts'

describe('a session logged out while its request is in flight', () => {
  it('control: a read-only session made before the logout reads until it, and ends with it', async () => {
    const h = await createHarness()
    const { organizationId, session, logout } = await signedIn(h)
    h.clock.advance(1)
    const token = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, { as: session, organizationId }),
    ).session as string
    expect(await lists(h, readOnly(token), organizationId)).toBe(200)
    await logout()
    expect(await lists(h, readOnly(token), organizationId)).toBe(401)
  })

  it('makes no read-only session: refused as the logged-out key, no token bound to nothing', async () => {
    const h = await createHarness()
    const { organizationId, session, logout } = await signedIn(h)
    h.clock.advance(1)
    const reply = await submitRacing(
      h,
      logout,
      'create_read_only_session',
      {},
      { as: session, organizationId },
    )
    expect(refusal(reply)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await lists(h, session, organizationId)).toBe(401)
  })

  it('concurrently, without a hook: no read-only session asked for around the logout reads after it', async () => {
    const h = await createHarness()
    const { organizationId, session, logout } = await signedIn(h)
    const made: Promise<Reply>[] = []
    let signedOut: Promise<void> | undefined
    for (let i = 0; i < 12; i++) {
      h.clock.advance(1)
      made.push(h.submit('create_read_only_session', {}, { as: session, organizationId }))
      if (i === 4) signedOut = logout()
    }
    const replies = await Promise.all(made)
    await signedOut
    expect(await lists(h, session, organizationId)).toBe(401)
    h.clock.advance(30 * 60_000)
    const stillReading: number[] = []
    for (const [index, reply] of replies.entries()) {
      if (reply.status !== 200) {
        expect(refusal(reply)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
        continue
      }
      const token = resultOf('create_read_only_session', reply).session as string
      if ((await lists(h, readOnly(token), organizationId)) === 200) stillReading.push(index)
    }
    expect(stillReading).toEqual([])
  })

  it('stamp_login mints no session that outlives the logout', async () => {
    const h = await createHarness()
    const { organizationId, session, logout } = await signedIn(h)
    h.clock.advance(1)
    const next = testKey()
    const reply = await submitRacing(
      h,
      logout,
      'stamp_login',
      { publicKey: next.publicKey, expirationSeconds: '86400' },
      { as: session, organizationId },
    )
    expect(refusal(reply)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await lists(h, session, organizationId)).toBe(401)
    h.clock.advance(2 * 3600_000) // past the logged-out session's own hour
    expect(await lists(h, next, organizationId)).toBe(401)
  })

  it('create_api_keys adds no durable key for the thief', async () => {
    const h = await createHarness()
    const { organizationId, userId, session, logout } = await signedIn(h)
    h.clock.advance(1)
    const planted = testKey()
    const reply = await submitRacing(
      h,
      logout,
      'create_api_keys',
      { userId, apiKeys: [planted.apiKey('planted')] },
      { as: session, organizationId },
    )
    expect(refusal(reply)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await lists(h, planted, organizationId)).toBe(401)
    // Recorded, failed with the refusal: the attempt is in the organization's records.
    const attempt = (await h.service.store.findBy('activities', 'organizationId', organizationId)).find(
      (activity) => activity.path === 'create_api_keys',
    )
    expect(attempt?.failure?.details.errorCode).toBe('PUBLIC_KEY_NOT_FOUND')
    expect(attempt?.status).toBe('ACTIVITY_STATUS_FAILED')
  })

  it('a passkey removed meanwhile opens no session; another credential of the user signs in', async () => {
    const h = await createHarness()
    const { phone, laptop, organizationId, removePhone } = await twoDevices(h)
    h.clock.advance(1)
    const onPhone = testKey()
    const reply = await submitRacing(
      h,
      removePhone,
      'stamp_login',
      { publicKey: onPhone.publicKey },
      {
        as: phone,
        organizationId,
      },
    )
    expect(refusal(reply)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await lists(h, onPhone, organizationId)).toBe(401)
    // Control: the laptop's passkey still opens sessions.
    h.clock.advance(1)
    const onLaptop = testKey()
    resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: onLaptop.publicKey }, { as: laptop, organizationId }),
    )
    expect(await lists(h, onLaptop, organizationId)).toBe(200)
  })
})
