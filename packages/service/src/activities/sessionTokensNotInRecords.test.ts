// A read-only session's token (a bearer credential for every query of the organization, as its
// maker) and a verification token were kept in their activities' records, which get_activity shows
// to every reader of the organization; the activity ids are in every ACTIVITY_UPDATES delivery,
// which latchkey_list_webhook_deliveries lists to every user and read-only session. Another reader
// took the token and read as its maker: after being removed from the organization, or after the
// read-only session it stole had ended with its owner's logout. Now the record keeps them empty:
// the submit answer carries the token, and only its maker asking with the credential that made it
// is shown a read-only session again (a replay of the request, an activity that ran after waiting).
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, type Stamper, testKey } from '../testing/harness.ts'
import { latestCode } from '../testing/latestCode.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})
async function harness() {
  const h = await createHarness()
  harnesses.push(h)
  return h
}

const sessionHeader = (token: string): Stamper => ({ stamp: () => ['X-Session', token] as [string, string] })
const readOnlyTokenOf = (record: { body: { activity: { result?: Record<string, { session?: string }> } } }) =>
  record.body.activity.result?.createReadOnlySessionResult?.session

/** The ids of the organization's create_read_only_session activities, as its webhook deliveries name them. */
async function readOnlySessionActivityIds(h: Harness, as: { as: Stamper; organizationId: string }) {
  const reply = await h.query('latchkey_list_webhook_deliveries', { paginationOptions: { limit: '100' } }, as)
  expect(reply.status).toBe(200)
  const ids = new Set<string>()
  for (const delivery of reply.body.webhookDeliveries as { body: string }[]) {
    const data = ((JSON.parse(delivery.body) as { data?: Record<string, string> }).data ?? {}) as Record<
      string,
      string
    >
    if (data.activityType === 'ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION' && data.activityId)
      ids.add(data.activityId)
  }
  return [...ids]
}

async function watchActivities(h: Harness, as?: { as: Stamper; organizationId: string }) {
  resultOf(
    'create_webhook_endpoint',
    await h.submit(
      'create_webhook_endpoint',
      {
        url: 'https://hooks.example.com/latchkey',
        name: 'ops',
        subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }],
      },
      as,
    ),
  )
}

describe('a read-only session token is not kept in its activity record', () => {
  it('a user later removed from the organization took no token from get_activity to keep reading as the root user', async () => {
    const h = await harness()
    const organizationId = h.organizationId
    await watchActivities(h)
    // A non-root user of the organization (a support tool's key, an agent's key): no policy.
    const staffKey = testKey()
    const { userIds } = resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'support',
            apiKeys: [staffKey.apiKey('support')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    h.clock.advance(1)
    // The root user opens a read-only session (its dashboard) with its durable key: the answer carries it.
    const mine = resultOf('create_read_only_session', await h.submit('create_read_only_session', {}))
    expect(
      (await h.query('list_users', {}, { as: sessionHeader(mine.session), organizationId })).status,
    ).toBe(200)

    // The support user finds the activity's id in the webhook deliveries and reads its record.
    const as = { as: staffKey, organizationId }
    const [activityId] = await readOnlySessionActivityIds(h, as)
    expect(activityId).toBeDefined()
    const record = await h.query('get_activity', { activityId }, as)
    expect(record.status).toBe(200)
    // The rest of the record is as before.
    expect(record.body.activity.result.createReadOnlySessionResult).toMatchObject({
      userId: mine.userId,
      sessionExpiry: mine.sessionExpiry,
    })
    const stolen = readOnlyTokenOf(record)

    // The operator removes the support user; its own key is refused from now on (control).
    resultOf('delete_users', await h.submit('delete_users', { userIds: [userIds[0]] }))
    expect((await h.query('whoami', {}, as)).status).toBe(401)
    if (stolen) {
      const read = await h.query('list_users', {}, { as: sessionHeader(stolen), organizationId })
      expect({ status: read.status, users: read.body.users?.length }).toEqual({
        status: 401,
        users: undefined,
      })
    }
    expect(stolen ?? '').toBe('')
  })

  it('a stolen read-only session does not outlive its logout by taking the owner’s other read-only session from get_activity', async () => {
    const h = await harness()
    const owner = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [owner] })
    const asOwner = { as: owner, organizationId }
    await watchActivities(h, asOwner)
    // A login session (browser A) and the read-only session it opened: the thief steals the latter.
    const sessionKey = testKey()
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: sessionKey.publicKey }, asOwner))
    h.clock.advance(1)
    const fromSession = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, { as: sessionKey, organizationId }),
    )
    const thief = { as: sessionHeader(fromSession.session), organizationId }
    // The owner's other read-only session, opened with its durable key (another device, a dashboard).
    h.clock.advance(1)
    const other = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, asOwner),
    )

    // With the stolen read-only session alone, the thief lists the deliveries and reads the records.
    const ids = await readOnlySessionActivityIds(h, thief)
    expect(ids).toHaveLength(2)
    const harvested: string[] = []
    for (const activityId of ids) {
      const record = await h.query('get_activity', { activityId }, thief)
      expect(record.status).toBe(200)
      const token = readOnlyTokenOf(record)
      if (token) harvested.push(token)
    }

    // The owner logs browser A out: the stolen read-only session ends with it (control).
    const keys = (await h.query('get_api_keys', { userId: userIds[0] }, asOwner)).body.apiKeys as {
      apiKeyId: string
      credential: { publicKey: string }
    }[]
    const row = keys.find((key) => key.credential.publicKey === sessionKey.publicKey)!
    resultOf(
      'delete_api_keys',
      await h.submit('delete_api_keys', { userId: userIds[0], apiKeyIds: [row.apiKeyId] }, asOwner),
    )
    expect((await h.query('list_wallets', {}, thief)).status).toBe(401)
    expect(
      (await h.query('list_wallets', {}, { as: sessionHeader(other.session), organizationId })).status,
    ).toBe(200)

    for (const token of harvested)
      expect((await h.query('list_wallets', {}, { as: sessionHeader(token), organizationId })).status).toBe(
        401,
      )
    expect(harvested.filter((token) => token === other.session)).toEqual([])
  })

  it('a replay of the request (same body, same stamp) answers a working session, bound and expiring as the first', async () => {
    const h = await harness()
    const durable = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [durable] })
    const sessionKey = testKey()
    resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: sessionKey.publicKey }, { as: durable, organizationId }),
    )
    const request = { as: sessionKey, organizationId, timestampMs: String(h.clock.now()) }
    const first = await h.submit('create_read_only_session', {}, request)
    const made = resultOf('create_read_only_session', first)
    h.clock.advance(5_000)
    // A client that lost the answer sends the same signed request again: the same activity.
    const again = await h.submit('create_read_only_session', {}, request)
    expect(again.body.activity.id).toBe(first.body.activity.id)
    const replayed = resultOf('create_read_only_session', again)
    expect(replayed).toMatchObject({ sessionExpiry: made.sessionExpiry, userId: made.userId })
    expect(replayed.session).not.toBe('')
    const readOnly = { as: sessionHeader(replayed.session), organizationId }
    expect((await h.query('list_wallets', {}, readOnly)).status).toBe(200)
    // Its maker's own get_activity (as a published client polls) shows it too; the session itself reads none.
    const activityId = first.body.activity.id
    expect(
      readOnlyTokenOf(await h.query('get_activity', { activityId }, { as: sessionKey, organizationId })),
    ).not.toBe('')
    expect(readOnlyTokenOf(await h.query('get_activity', { activityId }, readOnly))).toBe('')
    // Nor the same user's other credential: it shows whoever asked with the key that made it.
    expect(
      readOnlyTokenOf(await h.query('get_activity', { activityId }, { as: durable, organizationId })),
    ).toBe('')

    // Bound to the login session as the first: it ends at logout.
    const keys = (await h.query('get_api_keys', { userId: userIds[0] }, { as: durable, organizationId })).body
      .apiKeys as { apiKeyId: string; credential: { publicKey: string } }[]
    const row = keys.find((key) => key.credential.publicKey === sessionKey.publicKey)!
    resultOf(
      'delete_api_keys',
      await h.submit(
        'delete_api_keys',
        { userId: userIds[0], apiKeyIds: [row.apiKeyId] },
        { as: durable, organizationId },
      ),
    )
    expect((await h.query('list_wallets', {}, readOnly)).status).toBe(401)
  })

  it('one that waited for the root quorum reaches its maker through get_activity, never the root user whose vote ran it', async () => {
    const h = await harness()
    const sub = await h.createSubOrganization({ users: 2, threshold: 2 })
    const [maker, voter] = sub.keys as [ReturnType<typeof testKey>, ReturnType<typeof testKey>]
    const { organizationId } = sub
    const pending = (await h.submit('create_read_only_session', {}, { as: maker, organizationId })).body
      .activity
    expect(pending.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const approved = await h.submit(
      'approve_activity',
      { fingerprint: pending.fingerprint },
      { as: voter, organizationId },
    )
    expect(approved.body.activity).toMatchObject({ id: pending.id, status: 'ACTIVITY_STATUS_COMPLETED' })
    expect(readOnlyTokenOf(approved)).toBe('')
    expect(
      readOnlyTokenOf(
        await h.query('get_activity', { activityId: pending.id }, { as: voter, organizationId }),
      ),
    ).toBe('')

    const polled = await h.query('get_activity', { activityId: pending.id }, { as: maker, organizationId })
    const token = readOnlyTokenOf(polled)!
    const whoami = await h.query('whoami', {}, { as: sessionHeader(token), organizationId })
    expect({ status: whoami.status, userId: whoami.body.userId }).toEqual({
      status: 200,
      userId: sub.userIds[0],
    })
  })
})

describe('a verification token is not kept in its activity record', () => {
  it('verify_otp answers the token; its record shows it to no reader of the organization, a replay neither', async () => {
    const h = await harness()
    const organizationId = h.organizationId
    const staffKey = testKey()
    resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'support',
            apiKeys: [staffKey.apiKey('support')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    const contact = 'ada@example.com'
    const otpId = resultOf(
      'init_otp',
      await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact }),
    ).otpId
    h.clock.advance(1000)
    const request = { timestampMs: String(h.clock.now()) }
    const verify = await h.submit(
      'verify_otp',
      { otpId, otpCode: await latestCode(h.service, contact) },
      request,
    )
    // A token bound to no key: whoever holds it logs in as the contact's user.
    expect(resultOf('verify_otp', verify).verificationToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)

    const activityId = verify.body.activity.id
    for (const as of [
      { as: staffKey, organizationId },
      { as: h.root, organizationId },
    ]) {
      const record = await h.query('get_activity', { activityId }, as)
      expect(record.status).toBe(200)
      expect(record.body.activity.result.verifyOtpResult).toEqual({ verificationToken: '' })
    }
    const replay = await h.submit(
      'verify_otp',
      { otpId, otpCode: await latestCode(h.service, contact) },
      request,
    )
    expect(replay.body.activity.id).toBe(activityId)
    expect(resultOf('verify_otp', replay)).toEqual({ verificationToken: '' })
  })
})
