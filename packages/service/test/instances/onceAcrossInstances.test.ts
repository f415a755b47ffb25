// "Only once" across two instances on one PostgreSQL: a signed request acts once (raced, and
// replayed after the key that signed it was registered again), a user votes once, an OIDC token
// logs in once whichever activity spends it.
//
// The re-login case: a login with a key the user already has as a session key replaces its row
// with a new one (domain/sessions.ts), and the replay guard (the activity's fingerprint) knew a
// request by the row, so the same bytes replayed after such a re-login, inside their timestamp
// window, on either instance, ran again.
import { ATTESTED_STAMP_HEADER } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { oidcNonce } from '../../src/signin/oauth/oidcNonce.ts'
import { signInState } from '../../src/signin/signInState.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { useTwoInstances } from '../support/twoInstances.ts'

const pair = useTwoInstances('once_across_instances')

describe('a captured signed request and a re-login with the same session key', { timeout: 120_000 }, () => {
  it('a replay of a session-stamped create_wallet after the session re-logs in with its own key is answered with the first activity, not run again', async () => {
    const { a, b } = pair
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
    const { a, b } = pair
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

describe('votes and replays across two instances', { timeout: 120_000 }, () => {
  it('one user approving a quorum-3 activity 8 times at once over A and B counts once', async () => {
    const { a, b } = pair
    const keys = [testKey(), testKey(), testKey()]
    const sub = await a.createSubOrganization({ keys, threshold: 3 })
    const org = sub.organizationId
    a.clock.advance(1)
    const held = await a.submit(
      'create_users',
      {
        users: [
          { userName: 'intruder', apiKeys: [testKey().apiKey('k')], authenticators: [], oauthProviders: [] },
        ],
      },
      { as: keys[0]!, organizationId: org },
    )
    expect(held.status, JSON.stringify(held.body)).toBe(200)
    expect(held.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const fingerprint = held.body.activity.fingerprint
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        [a, b][i % 2]!.submit(
          'approve_activity',
          { fingerprint },
          { as: keys[1]!, organizationId: org, timestampMs: String(a.clock.now() + 1 + i) },
        ),
      ),
    )
    expect(replies.filter((r) => r.status >= 500).map((r) => r.body)).toEqual([])
    const votes = (await a.service.store.findBy('votes', 'activityId', held.body.activity.id)).filter(
      (v) => v.userId === sub.userIds[1],
    )
    const activity = await a.service.store.get('activities', held.body.activity.id)
    const users = await a.service.store.findBy('users', 'organizationId', org)
    expect({ votes: votes.length, status: activity?.status, users: users.length }).toEqual({
      votes: 1,
      status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED',
      users: 3,
    })
  })

  it('one signed create_users sent 10 times at once over A and B is one activity and one user', async () => {
    const { a, b } = pair
    const key = testKey()
    const sub = await a.createSubOrganization({ keys: [key] })
    const org = sub.organizationId
    a.clock.advance(1)
    const ts = String(a.clock.now())
    const params = {
      users: [{ userName: 'once', apiKeys: [testKey().apiKey('k')], authenticators: [], oauthProviders: [] }],
    }
    // The same bytes and the same stamp: build once, post 10 times.
    const body = JSON.stringify({
      type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
      timestampMs: ts,
      organizationId: org,
      parameters: params,
    })
    const [header, value] = key.stamp(body)
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        [a, b][i % 2]!.post('/public/v1/submit/create_users', body, { [header]: value }),
      ),
    )
    expect(replies.filter((r) => r.status !== 200).map((r) => r.body)).toEqual([])
    expect(new Set(replies.map((r) => r.body.activity.id)).size).toBe(1)
    const users = await a.service.store.findBy('users', 'organizationId', org)
    expect(users.filter((u) => u.userName === 'once')).toHaveLength(1)
  })
})

function clientKey() {
  const privateKey = p256.utils.randomSecretKey()
  const publicKey = bytesToHex(p256.getPublicKey(privateKey, true))
  const sign = (text: string) =>
    bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format: 'der' }))
  return {
    publicKey,
    attested: (body: string, token: string) =>
      base64urlnopad.encode(
        utf8ToBytes(
          JSON.stringify({
            publicKeyAttestation: token,
            scheme: 'STAMP_ATTESTED_SCHEME_P256_OIDC',
            publicKey,
            signature: sign(body),
          }),
        ),
      ),
  }
}

const token = (sub: string, nonce: string) =>
  signInState(pair.a.service.runtime).oidc.issue({
    sub,
    aud: 'client-web',
    nonce,
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    idp_iss: 'https://accounts.google.com',
    org: pair.a.organizationId,
  }).token

describe('one OIDC token, raced over two instances', { timeout: 120_000 }, () => {
  it('4 oauth_login and 4 X-Stamp-Attested stamp_login at once over A and B: one session', async () => {
    const { a, b } = pair
    const subject = `subject-${Math.random().toString(36).slice(2)}`
    const acct = await a.createSubOrganization()
    const org = acct.organizationId
    a.clock.advance(1)
    resultOf(
      'create_oauth_providers',
      await a.submit(
        'create_oauth_providers',
        {
          userId: acct.userIds[0],
          oauthProviders: [
            { providerName: 'OAUTH2_PROVIDER_GOOGLE', oidcToken: token(subject, 'n'.repeat(64)) },
          ],
        },
        { as: acct.keys[0]!, organizationId: org },
      ),
    )
    const bound = clientKey()
    const login = token(subject, oidcNonce(bound.publicKey))
    a.clock.advance(1)
    const now = a.clock.now()
    const replies = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) =>
        [a, b][i % 2]!.submit(
          'oauth_login',
          { oidcToken: login, publicKey: bound.publicKey },
          { organizationId: org, timestampMs: String(now + i) },
        ),
      ),
      ...Array.from({ length: 4 }, (_, i) => {
        const text = JSON.stringify({
          type: 'ACTIVITY_TYPE_STAMP_LOGIN',
          timestampMs: String(now + 10 + i),
          organizationId: org,
          parameters: { publicKey: bound.publicKey },
        })
        return [a, b][i % 2]!.post('/public/v1/submit/stamp_login', text, {
          [ATTESTED_STAMP_HEADER]: bound.attested(text, login),
        })
      }),
    ])
    const summary = replies.map((r) => [
      r.status,
      r.body.activity?.status ?? r.body.details?.errorCode ?? r.body,
    ])
    expect(
      replies.filter((r) => r.status >= 500),
      JSON.stringify(summary),
    ).toEqual([])
    expect(
      replies.filter((r) => r.status === 200 && r.body.activity?.status === 'ACTIVITY_STATUS_COMPLETED'),
      JSON.stringify(summary),
    ).toHaveLength(1)
  })
})
