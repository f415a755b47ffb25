// A captured signed request is answered with the activity it made, never run again, even after
// the key that signed it was registered again: a login with a key the user already has as a
// session key replaces its row with a new one (domain/sessions.ts), and the replay guard (the
// activity's fingerprint) knew a request by the row, so the same bytes replayed after such a
// re-login, inside their timestamp window, on either instance, ran again. Two instances on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { twoInstances } from '../support/twoInstances.ts'

let cluster: PostgresCluster
let a: Harness
let b: Harness

beforeAll(async () => {
  cluster = await startPostgres()
  ;[a, b] = await twoInstances(cluster, 'replay_after_relogin')
}, 600_000)

afterAll(async () => {
  await a?.service.close()
  await b?.service.close()
  await cluster?.dispose()
}, 60_000)

describe('a captured signed request and a re-login with the same session key', { timeout: 120_000 }, () => {
  it('a replay of a session-stamped create_wallet after the session re-logs in with its own key is answered with the first activity, not run again', async () => {
    const root = testKey()
    const acct = await a.createSubOrganization({ keys: [root] })
    const org = acct.organizationId
    const session = testKey()
    // The user logs in: a read-write session for `session`'s key.
    a.clock.advance(1)
    resultOf(
      'stamp_login',
      await a.submit('stamp_login', { publicKey: session.publicKey }, { as: root, organizationId: org }),
    )
    // The session signs a request (captured by whoever can see it on its way).
    a.clock.advance(1)
    const body = JSON.stringify({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: String(a.clock.now()),
      organizationId: org,
      parameters: { walletName: 'once', accounts: [ETHEREUM_ACCOUNT] },
    })
    const [header, value] = session.stamp(body)
    const first = await a.post('/public/v1/submit/create_wallet', body, { [header]: value })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')

    // Control: a replay now is recognised (same activity, no second wallet).
    a.clock.advance(1_000)
    const early = await b.post('/public/v1/submit/create_wallet', body, { [header]: value })
    expect(early.status).toBe(200)
    expect(early.body.activity.id).toBe(first.body.activity.id)

    // The session refreshes itself with its own key (stamp_login stamped by the session, same
    // public key), as a client that keeps its key between logins does.
    a.clock.advance(1_000)
    resultOf(
      'stamp_login',
      await a.submit('stamp_login', { publicKey: session.publicKey }, { as: session, organizationId: org }),
    )

    // The same captured bytes and stamp, replayed 10 s after they were signed (window: 5 min).
    a.clock.advance(8_000)
    const replay = await b.post('/public/v1/submit/create_wallet', body, { [header]: value })
    const wallets = (await a.service.store.findBy('wallets', 'organizationId', org)).filter(
      (w) => w.name === 'once',
    )
    expect({
      status: replay.status,
      activityId: replay.body.activity?.id,
      wallets: wallets.length,
    }).toEqual({ status: 200, activityId: first.body.activity.id, wallets: 1 })
  })

  it('with one captured self-refresh and one captured request, an attacker alone runs the request again and again', async () => {
    const root = testKey()
    const acct = await a.createSubOrganization({ keys: [root] })
    const org = acct.organizationId
    const session = testKey()
    a.clock.advance(1)
    resultOf(
      'stamp_login',
      await a.submit('stamp_login', { publicKey: session.publicKey }, { as: root, organizationId: org }),
    )
    const signed = (path: string, type: string, parameters: unknown) => {
      a.clock.advance(1)
      const body = JSON.stringify({
        type,
        timestampMs: String(a.clock.now()),
        organizationId: org,
        parameters,
      })
      const [header, value] = session.stamp(body)
      return (h: Harness) => h.post(`/public/v1/submit/${path}`, body, { [header]: value })
    }
    // What the victim's client sent once each (and the attacker saw): a wallet, then a refresh of
    // its session with its own key.
    const wallet = signed('create_wallet', 'ACTIVITY_TYPE_CREATE_WALLET', {
      walletName: 'loop',
      accounts: [ETHEREUM_ACCOUNT],
    })
    const refresh = signed('stamp_login', 'ACTIVITY_TYPE_STAMP_LOGIN', { publicKey: session.publicKey })
    expect((await wallet(a)).status).toBe(200)
    expect((await refresh(a)).status).toBe(200)
    // The attacker, alone, alternates the two captured requests over both instances.
    for (let round = 0; round < 3; round++) {
      a.clock.advance(1_000)
      await wallet([a, b][round % 2]!)
      await refresh([b, a][round % 2]!)
    }
    const wallets = (await a.service.store.findBy('wallets', 'organizationId', org)).filter(
      (w) => w.name === 'loop',
    )
    expect(wallets).toHaveLength(1)
  })
})
