// Who get_activity shows a read-only session's token again to (`shownAgain`, `shownTo`): the maker
// asking with the credential that made it, re-signed with the same binding and expiry; never the
// parent's root user, another sub-organization, the maker's other key or the session itself; and
// nothing once that credential is logged out or expired.
import { decodeJwtClaims } from '@latchkey/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, type Stamper, testKey } from '../../src/testing/harness.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})
const sessionHeader = (token: string): Stamper => ({ stamp: () => ['X-Session', token] as [string, string] })
const tokenOf = (reply: { body: { activity?: { result?: Record<string, { session?: string }> } } }) =>
  reply.body.activity?.result?.createReadOnlySessionResult?.session

describe('a read-only session is shown again only to the credential that made it', () => {
  it('parent root, another sub-organization, the maker via another key: nothing; the maker: same binding and expiry; ends at logout', async () => {
    const h = await createHarness()
    harnesses.push(h)
    const durable = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [durable] })
    const owner = { as: durable, organizationId }
    const sessionKey = testKey()
    resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: sessionKey.publicKey, expirationSeconds: '600' }, owner),
    )
    h.clock.advance(1000)
    const first = await h.submit('create_read_only_session', {}, { as: sessionKey, organizationId })
    const made = resultOf('create_read_only_session', first)
    const activityId = first.body.activity.id as string

    // The parent's root user (dev key) reading the sub-organization's activity.
    const parent = await h.query('get_activity', { activityId }, { as: h.root, organizationId })
    expect(tokenOf(parent) ?? '').toBe('')
    // Another sub-organization's user, naming its own organization or the victim's.
    const other = await h.createSubOrganization()
    const foreign = await h.query('get_activity', { activityId }, { as: other.keys[0]!, organizationId })
    expect(tokenOf(foreign) ?? '').toBe('')
    const foreignOwn = await h.query(
      'get_activity',
      { activityId },
      { as: other.keys[0]!, organizationId: other.organizationId },
    )
    expect(tokenOf(foreignOwn) ?? '').toBe('')
    // The maker's durable key (same user, other credential).
    expect(tokenOf(await h.query('get_activity', { activityId }, owner))).toBe('')
    // The read-only session itself.
    expect(
      tokenOf(
        await h.query('get_activity', { activityId }, { as: sessionHeader(made.session), organizationId }),
      ),
    ).toBe('')

    // The maker's exact credential: same claims but iat, same expiry.
    h.clock.advance(60_000)
    const again = tokenOf(await h.query('get_activity', { activityId }, { as: sessionKey, organizationId }))!
    const a = decodeJwtClaims<Record<string, unknown>>(made.session)
    const b = decodeJwtClaims<Record<string, unknown>>(again)
    expect({ ...b, iat: 0 }).toEqual({ ...a, iat: 0 })
    expect(a.api_key_id).toBeDefined()
    expect(Number(a.exp)).toBeLessThanOrEqual(Math.floor(h.clock.now() / 1000) + 600)

    // Logout: both tokens end; the deleted key can neither poll nor replay.
    const keys = (await h.query('get_api_keys', { userId: userIds[0] }, owner)).body.apiKeys as {
      apiKeyId: string
      credential: { publicKey: string }
    }[]
    const row = keys.find((key) => key.credential.publicKey === sessionKey.publicKey)!
    resultOf(
      'delete_api_keys',
      await h.submit('delete_api_keys', { userId: userIds[0], apiKeyIds: [row.apiKeyId] }, owner),
    )
    for (const token of [made.session, again])
      expect((await h.query('list_wallets', {}, { as: sessionHeader(token), organizationId })).status).toBe(
        401,
      )
    expect((await h.query('get_activity', { activityId }, { as: sessionKey, organizationId })).status).toBe(
      401,
    )
    // The same session key logged in again (a new row): the old activity is not re-signed for it.
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: sessionKey.publicKey }, owner))
    expect(
      tokenOf(await h.query('get_activity', { activityId }, { as: sessionKey, organizationId })) ?? '',
    ).toBe('')
  })

  it('a login session past its expiry mints nothing from get_activity', async () => {
    const h = await createHarness()
    harnesses.push(h)
    const durable = testKey()
    const { organizationId } = await h.createSubOrganization({ keys: [durable] })
    const sessionKey = testKey()
    resultOf(
      'stamp_login',
      await h.submit(
        'stamp_login',
        { publicKey: sessionKey.publicKey, expirationSeconds: '120' },
        { as: durable, organizationId },
      ),
    )
    h.clock.advance(1000)
    const first = await h.submit('create_read_only_session', {}, { as: sessionKey, organizationId })
    const made = resultOf('create_read_only_session', first)
    h.clock.advance(130_000)
    expect(
      (
        await h.query(
          'get_activity',
          { activityId: first.body.activity.id },
          { as: sessionKey, organizationId },
        )
      ).status,
    ).toBe(401)
    expect(
      (await h.query('list_wallets', {}, { as: sessionHeader(made.session), organizationId })).status,
    ).toBe(401)
  })
})
