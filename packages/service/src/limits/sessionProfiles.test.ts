// Session profiles (issue 37): the published create_session_profile and queries, the Latchkey
// update and delete, and the attacks of a session issued under a profile: another wallet, an
// export, a new key or session, its own limit or profile, an alternate activity for the same
// signature, a replay, and another sub-organization's profile; and its logout, the one credential
// activity it may run: its own key, never the user's other keys nor another user's.

import { decodeJwtClaims } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../assembly/createService.ts'
import type { EventSink } from '../kernel/base/events.ts'
import { createMetrics } from '../observability/metrics.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  resultOf,
  type TestKey,
  testKey,
} from '../testing/harness.ts'
import { DEAD_ADDRESS as DEAD, unsignedTransfer } from '../testing/unsignedTransfer.ts'

let nonce = 0
const tx = (value: bigint) => unsignedTransfer({ to: DEAD, value, nonce: nonce++, maxFeePerGas: 0n })

async function setup(options: CreateServiceOptions = {}) {
  const h = await createHarness(options)
  const sub = await h.createSubOrganization({ wallet: { walletName: 'Agent', accounts: [ETHEREUM_ACCOUNT] } })
  const owner = sub.keys[0]!
  const organizationId = sub.organizationId
  const submit = (path: Parameters<Harness['submit']>[0], parameters: Json, by: TestKey = owner) => {
    h.clock.advance(1)
    return h.submit(path, parameters, { as: by, organizationId })
  }
  const other = resultOf(
    'create_wallet',
    await submit('create_wallet', { walletName: 'Savings', accounts: [ETHEREUM_ACCOUNT] }),
  )
  const profile = async (scope: string, more: Json = {}) =>
    resultOf(
      'create_session_profile',
      await submit('create_session_profile', { sessionProfileName: `p${nonce++}`, scope, ...more }),
    ).sessionProfileId as string
  /** A session key logged in by the owner under `sessionProfileId`. */
  const login = async (sessionProfileId: string, more: Json = {}) => {
    const key = testKey()
    const reply = await submit('stamp_login', { publicKey: key.publicKey, sessionProfileId, ...more })
    return { key, session: resultOf('stamp_login', reply).session as string }
  }
  const sign = (by: TestKey, signWith: string) =>
    submit(
      'sign_transaction',
      { signWith, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(1n) },
      by,
    )
  return {
    h,
    organizationId,
    owner,
    userId: sub.userIds[0]!,
    submit,
    profile,
    login,
    sign,
    walletId: sub.walletId!,
    address: sub.addresses![0]!,
    otherWalletId: other.walletId as string,
    otherAddress: other.addresses[0] as string,
  }
}

const codeOf = (reply: { status: number; body: Json }) => [reply.status, reply.body?.details?.errorCode]

describe('session profiles', () => {
  it('creates, reads (published shape), updates and deletes a profile; bad fields are 400s naming them', async () => {
    const { h, submit, organizationId, owner } = await setup()
    const created = await submit('create_session_profile', {
      sessionProfileName: 'agent',
      scope: "activity.action == 'SIGN'",
      expirationSeconds: '600',
      notes: 'for the trading bot',
    })
    expect(created.body.activity.type).toBe('ACTIVITY_TYPE_CREATE_SESSION_PROFILE')
    const id = resultOf('create_session_profile', created).sessionProfileId as string
    const read = await h.query('get_session_profile', { sessionProfileId: id }, { as: owner, organizationId })
    expect(read.body.sessionProfile).toMatchObject({
      sessionProfileId: id,
      sessionProfileName: 'agent',
      scope: "activity.action == 'SIGN'",
      expirationSeconds: '600',
      notes: 'for the trading bot',
      createdAt: { seconds: expect.any(String), nanos: expect.any(String) },
    })
    for (const [parameters, field] of [
      [{ sessionProfileName: 'x', scope: '' }, 'parameters.scope'],
      [{ sessionProfileName: 'x', scope: "activity.action == 'SIGN" }, 'parameters.scope'],
      [{ sessionProfileName: 'x', scope: 'true', expirationSeconds: '-1' }, 'parameters.expirationSeconds'],
      [{ scope: 'true' }, 'parameters.sessionProfileName'],
    ] as const) {
      const reply = await submit('create_session_profile', parameters)
      expect([reply.status, reply.body.details.field]).toEqual([400, field])
    }
    expect(
      codeOf(await submit('create_session_profile', { sessionProfileName: 'agent', scope: 'true' })),
    ).toEqual([409, 'ALREADY_EXISTS'])
    resultOf(
      'latchkey_update_session_profile',
      await submit('latchkey_update_session_profile', { sessionProfileId: id, scope: 'false' }),
    )
    const listed = await h.query('get_session_profiles', {}, { as: owner, organizationId })
    expect(listed.body.sessionProfiles).toEqual([
      expect.objectContaining({ sessionProfileId: id, scope: 'false' }),
    ])
    resultOf(
      'latchkey_delete_session_profile',
      await submit('latchkey_delete_session_profile', { sessionProfileId: id }),
    )
    expect(
      codeOf(await h.query('get_session_profile', { sessionProfileId: id }, { as: owner, organizationId })),
    ).toEqual([404, 'SESSION_PROFILE_NOT_FOUND'])
    // The parent organization's own root cannot read or change a sub-organization's profiles by id.
    const parent = await h.query('get_session_profile', { sessionProfileId: id })
    expect(parent.status).toBe(404)
  })

  it('a profile session signs for its wallet only, never exports, creates keys or sessions, or changes its scope', async () => {
    const s = await setup()
    const profileId = await s.profile(`activity.action == 'SIGN' && wallet.id == '${s.walletId}'`, {
      expirationSeconds: '600',
    })
    // The profile's lifetime wins over the login's.
    const { key, session } = await s.login(profileId, { expirationSeconds: '60' })
    expect(decodeJwtClaims<{ exp: number }>(session).exp).toBe(Math.floor(s.h.clock.now() / 1000) + 600)

    expect((await s.sign(key, s.address)).status).toBe(200)
    expect(codeOf(await s.sign(key, s.otherAddress))).toEqual([403, 'SESSION_SCOPE_DENIED'])
    // The same signature through another activity, or an older version of it, is judged the same.
    expect(
      codeOf(
        await s.submit(
          'sign_raw_payload',
          {
            signWith: s.otherAddress,
            payload: '0x1234',
            encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
            hashFunction: 'HASH_FUNCTION_KECCAK256',
          },
          key,
        ),
      ),
    ).toEqual([403, 'SESSION_SCOPE_DENIED'])
    const batch = await s.submit(
      'sign_raw_payloads',
      {
        signWith: s.otherAddress,
        payloads: ['0x12', '0x34'],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_KECCAK256',
      },
      key,
    )
    expect(codeOf(batch)).toEqual([403, 'SESSION_SCOPE_DENIED'])

    const attempts: [Parameters<Harness['submit']>[0], Json][] = [
      ['export_wallet', { walletId: s.walletId, targetPublicKey: testKey().publicKey }],
      ['create_wallet', { walletName: 'mine', accounts: [ETHEREUM_ACCOUNT] }],
      ['create_api_keys', { userId: s.userId, apiKeys: [testKey().apiKey('k')] }],
      ['stamp_login', { publicKey: testKey().publicKey }],
      ['latchkey_update_session_profile', { sessionProfileId: profileId, scope: 'true' }],
      ['create_session_profile', { sessionProfileName: 'wide', scope: 'true' }],
      ['create_policy', { policyName: 'all', effect: 'EFFECT_ALLOW', condition: 'true', consensus: '' }],
    ]
    for (const [path, parameters] of attempts)
      expect([path, ...codeOf(await s.submit(path, parameters, key))]).toEqual([
        path,
        403,
        'SESSION_SCOPE_DENIED',
      ])
    // The refusal is the recorded decision.
    const refused = await s.submit(
      'export_wallet',
      { walletId: s.walletId, targetPublicKey: testKey().publicKey },
      key,
    )
    const evaluations = await s.h.query(
      'get_policy_evaluations',
      { activityId: refused.body.details.activityId },
      { as: s.owner, organizationId: s.organizationId },
    )
    expect(evaluations.body.policyEvaluations[0].policyEvaluations[0].outcome).toBe('OUTCOME_DENY_EXPLICIT')

    // A replay of the allowed request answers the same activity; it signs nothing new.
    s.h.clock.advance(1)
    const body = { signWith: s.address, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(1n) }
    const first = await s.h.submit('sign_transaction', body, { as: key, organizationId: s.organizationId })
    const again = await s.h.submit('sign_transaction', body, { as: key, organizationId: s.organizationId })
    expect(again.body.activity.id).toBe(first.body.activity.id)

    // The owner narrows the scope: the live session is held to it at once; deleting ends it.
    resultOf(
      'latchkey_update_session_profile',
      await s.submit('latchkey_update_session_profile', { sessionProfileId: profileId, scope: 'false' }),
    )
    expect(codeOf(await s.sign(key, s.address))).toEqual([403, 'SESSION_SCOPE_DENIED'])
    resultOf(
      'latchkey_update_session_profile',
      await s.submit('latchkey_update_session_profile', {
        sessionProfileId: profileId,
        scope: `wallet.id == '${s.walletId}'`,
      }),
    )
    expect((await s.sign(key, s.address)).status).toBe(200)
    resultOf(
      'latchkey_delete_session_profile',
      await s.submit('latchkey_delete_session_profile', { sessionProfileId: profileId }),
    )
    // Deleting the profile ended its session: its key is gone.
    expect(codeOf(await s.sign(key, s.address))).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    // The owner's own credentials are not confined.
    expect((await s.sign(s.owner, s.otherAddress)).status).toBe(200)
  })

  it('even a scope of `true` never exports, imports, manages credentials, policies or limits, nor votes', async () => {
    const s = await setup()
    const { key } = await s.login(await s.profile('true'))
    expect((await s.sign(key, s.otherAddress)).status).toBe(200)
    expect(
      codeOf(
        await s.submit('export_wallet', { walletId: s.walletId, targetPublicKey: testKey().publicKey }, key),
      ),
    ).toEqual([403, 'SESSION_SCOPE_DENIED'])
    expect(
      codeOf(
        await s.submit(
          'latchkey_create_spending_limit',
          {
            spendingLimitName: 'x',
            scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: s.address },
            window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
            asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
            amount: '1',
          },
          key,
        ),
      ),
    ).toEqual([403, 'SESSION_SCOPE_DENIED'])
    expect(codeOf(await s.submit('stamp_login', { publicKey: testKey().publicKey }, key))).toEqual([
      403,
      'SESSION_SCOPE_DENIED',
    ])
    // Nor votes on another's activity, either way: a rejection is a vote too.
    const pending = await s.submit('create_wallet', { walletName: 'held', accounts: [] })
    for (const path of ['approve_activity', 'reject_activity'] as const)
      expect(codeOf(await s.submit(path, { fingerprint: pending.body.activity.fingerprint }, key))).toEqual([
        403,
        'SESSION_SCOPE_DENIED',
      ])
  })

  it('counts a profile session against a limit on its profile, and refuses it over the limit', async () => {
    const s = await setup()
    const profileId = await s.profile(`wallet.id == '${s.walletId}'`)
    const limitId = resultOf(
      'latchkey_create_spending_limit',
      await s.submit('latchkey_create_spending_limit', {
        spendingLimitName: 'agent allowance',
        scope: { type: 'SPENDING_LIMIT_SCOPE_SESSION_PROFILE', sessionProfileId: profileId },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: '2',
      }),
    ).spendingLimitId
    const { key } = await s.login(profileId)
    expect((await s.sign(key, s.address)).status).toBe(200)
    expect((await s.sign(key, s.address)).status).toBe(200)
    const over = await s.sign(key, s.address)
    expect(codeOf(over)).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
    expect(over.body.details).toMatchObject({ spendingLimitId: limitId, used: '2', remaining: '0' })
    // The owner's own key is not under the profile's limit.
    expect((await s.sign(s.owner, s.address)).status).toBe(200)
    // A limit naming another organization's profile is a 404 naming the field.
    const stranger = await setup()
    const theirs = await stranger.profile('true')
    const reply = await s.submit('latchkey_create_spending_limit', {
      spendingLimitName: 'x',
      scope: { type: 'SPENDING_LIMIT_SCOPE_SESSION_PROFILE', sessionProfileId: theirs },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
      amount: '1',
    })
    expect([reply.status, reply.body.details.field]).toEqual([404, 'parameters.scope.sessionProfileId'])
  })

  it('counts refusals in Prometheus metrics by code and activity type, never by limit id', async () => {
    const metrics = createMetrics()
    const s = await setup({
      events: { emit: ((name, data) => metrics.emit(name, data)) as EventSink['emit'] },
    })
    const profileId = await s.profile(`wallet.id == '${s.walletId}'`)
    const limitId = resultOf(
      'latchkey_create_spending_limit',
      await s.submit('latchkey_create_spending_limit', {
        spendingLimitName: 'tiny',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: s.address },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: '1',
      }),
    ).spendingLimitId as string
    const { key } = await s.login(profileId)
    expect((await s.sign(key, s.address)).status).toBe(200)
    expect((await s.sign(key, s.address)).status).toBe(429)
    expect((await s.sign(s.owner, s.address)).status).toBe(429)
    const raw = await s.submit('sign_raw_payload', {
      signWith: s.address,
      payload: '0x1234',
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_KECCAK256',
    })
    expect(codeOf(raw)).toEqual([403, 'SPEND_UNDECODABLE'])
    expect((await s.sign(key, s.otherAddress)).status).toBe(403)
    const rendered = await metrics.render()
    expect(rendered).toContain(
      'latchkey_spend_refusals_total{code="SPENDING_LIMIT_EXCEEDED",type="sign_transaction"} 2',
    )
    expect(rendered).toContain(
      'latchkey_spend_refusals_total{code="SPEND_UNDECODABLE",type="sign_raw_payload"} 1',
    )
    expect(rendered).toContain('latchkey_session_scope_refusals_total{type="sign_transaction"} 1')
    expect(rendered).not.toContain(limitId)
  })

  it("refuses another sub-organization's profile at login; the parent organization's profiles serve its sub-organizations", async () => {
    const s = await setup()
    const sibling = await s.h.createSubOrganization()
    const theirs = await s.profile('true')
    s.h.clock.advance(1)
    const reply = await s.h.submit(
      'stamp_login',
      { publicKey: testKey().publicKey, sessionProfileId: theirs },
      { as: sibling.keys[0]!, organizationId: sibling.organizationId },
    )
    expect([reply.status, reply.body.details.errorCode, reply.body.details.field]).toEqual([
      404,
      'SESSION_PROFILE_NOT_FOUND',
      'parameters.sessionProfileId',
    ])
    // The app's profile, made in the parent organization, confines its users' sessions.
    s.h.clock.advance(1)
    const appProfile = resultOf(
      'create_session_profile',
      await s.h.submit('create_session_profile', {
        sessionProfileName: 'read and sign',
        scope: "activity.action == 'SIGN'",
      }),
    ).sessionProfileId as string
    const { key } = await s.login(appProfile)
    expect((await s.sign(key, s.otherAddress)).status).toBe(200)
    expect(
      codeOf(await s.submit('create_wallet', { walletName: 'no', accounts: [ETHEREUM_ACCOUNT] }, key)),
    ).toEqual([403, 'SESSION_SCOPE_DENIED'])
  })

  describe('signing out', () => {
    /** The id of the API key of `userId` whose public key is `key`'s, read by the owner. */
    const keyIdOf = async (s: Awaited<ReturnType<typeof setup>>, userId: string, key: TestKey) => {
      const reply = await s.h.query(
        'get_api_keys',
        { userId },
        { as: s.owner, organizationId: s.organizationId },
      )
      return (reply.body.apiKeys as { apiKeyId: string; credential: { publicKey: string } }[]).find(
        (k) => k.credential.publicKey === key.publicKey,
      )!.apiKeyId
    }
    /** A session key logged in by the owner, under `sessionProfileId` if given, and its key id. */
    const session = async (s: Awaited<ReturnType<typeof setup>>, sessionProfileId?: string) => {
      const key = testKey()
      resultOf(
        'stamp_login',
        await s.submit('stamp_login', {
          publicKey: key.publicKey,
          expirationSeconds: '3600',
          ...(sessionProfileId ? { sessionProfileId } : {}),
        }),
      )
      return { key, apiKeyId: await keyIdOf(s, s.userId, key) }
    }
    /** Its `delete_api_keys` (as every published client's logout sends it), then whether its key still works. */
    const logout = async (s: Awaited<ReturnType<typeof setup>>, key: TestKey, parameters: Json) => {
      const reply = await s.submit('delete_api_keys', parameters, key)
      s.h.clock.advance(60_000)
      const after = await s.h.query('list_wallets', {}, { as: key, organizationId: s.organizationId })
      return [...codeOf(reply), after.status]
    }

    it('control: a session with no profile deletes its own key, which is refused after', async () => {
      const s = await setup()
      const { key, apiKeyId } = await session(s)
      expect(await logout(s, key, { userId: s.userId, apiKeyIds: [apiKeyId] })).toEqual([200, undefined, 401])
    })

    it("a profile session deletes its own key, whatever its scope, and nothing else: not its user's other keys, nor another user's", async () => {
      const s = await setup()
      const { key, apiKeyId } = await session(s, await s.profile("activity.action == 'SIGN'"))
      // Another session of the same user, the owner's registered key, and another user's key.
      const sibling = await session(s)
      const ownerKeyId = await keyIdOf(s, s.userId, s.owner)
      const stranger = testKey()
      const strangerId = resultOf(
        'create_users',
        await s.submit('create_users', {
          users: [
            {
              userName: 'stranger',
              apiKeys: [stranger.apiKey('stranger')],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        }),
      ).userIds[0] as string
      const strangerKeyId = await keyIdOf(s, strangerId, stranger)
      const attempts: Json[] = [
        { userId: s.userId, apiKeyIds: [ownerKeyId] },
        { userId: s.userId, apiKeyIds: [sibling.apiKeyId] },
        { userId: s.userId, apiKeyIds: [apiKeyId, ownerKeyId] },
        { userId: s.userId, apiKeyIds: [ownerKeyId, apiKeyId] },
        { userId: s.userId, apiKeyIds: [apiKeyId, sibling.apiKeyId] },
        { userId: strangerId, apiKeyIds: [strangerKeyId] },
        { userId: strangerId, apiKeyIds: [apiKeyId] },
      ]
      for (const parameters of attempts)
        expect([parameters, ...codeOf(await s.submit('delete_api_keys', parameters, key))]).toEqual([
          parameters,
          403,
          'SESSION_SCOPE_DENIED',
        ])
      // Nothing was deleted, its own key included.
      s.h.clock.advance(60_000)
      for (const by of [key, sibling.key, s.owner, stranger])
        expect(
          (await s.h.query('list_wallets', {}, { as: by, organizationId: s.organizationId })).status,
        ).toBe(200)

      expect(await logout(s, key, { userId: s.userId, apiKeyIds: [apiKeyId] })).toEqual([200, undefined, 401])
      for (const by of [sibling.key, s.owner, stranger])
        expect(
          (await s.h.query('list_wallets', {}, { as: by, organizationId: s.organizationId })).status,
        ).toBe(200)
    })

    it('a session of a profile narrowed to `false` still signs itself out; one of a deleted profile has ended already', async () => {
      const s = await setup()
      const narrowed = await s.profile('true')
      const deleted = await s.profile('true')
      const a = await session(s, narrowed)
      const b = await session(s, deleted)
      resultOf(
        'latchkey_update_session_profile',
        await s.submit('latchkey_update_session_profile', { sessionProfileId: narrowed, scope: 'false' }),
      )
      resultOf(
        'latchkey_delete_session_profile',
        await s.submit('latchkey_delete_session_profile', { sessionProfileId: deleted }),
      )
      expect(codeOf(await s.sign(a.key, s.address))).toEqual([403, 'SESSION_SCOPE_DENIED'])
      expect(codeOf(await s.sign(b.key, s.address))).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
      expect(await logout(s, a.key, { userId: s.userId, apiKeyIds: [a.apiKeyId] })).toEqual([
        200,
        undefined,
        401,
      ])
      // The deletion ended it: there is nothing left to sign out (the kit's logout forgets the key).
      expect(await logout(s, b.key, { userId: s.userId, apiKeyIds: [b.apiKeyId] })).toEqual([
        401,
        'PUBLIC_KEY_NOT_FOUND',
        401,
      ])
    })
  })
})
