import { softPasskey } from '@latchkey/service/testing'
import { describe, expect, it, vi } from 'vitest'
import { approveActivity } from '../actions/activities/approveActivity.ts'
import { createAuthenticators } from '../actions/activities/createAuthenticators.ts'
import { createWallet } from '../actions/activities/createWallet.ts'
import { rejectActivity } from '../actions/activities/rejectActivity.ts'
import { getActivity } from '../actions/queries/getActivity.ts'
import { getPolicyEvaluations } from '../actions/queries/getPolicyEvaluations.ts'
import { getWalletAccounts } from '../actions/queries/getWalletAccounts.ts'
import { getWallets } from '../actions/queries/getWallets.ts'
import { ConsensusNeededError } from '../errors.ts'
import { switchSession } from '../session/sessions.ts'
import { createClientFixture } from '../test/fixtures.ts'
import { submitActivity } from './activity.ts'

describe('activities that need consensus', () => {
  it('surfaces CONSENSUS_NEEDED as a typed error carrying the activity; a second approval executes it', async () => {
    const fx = await createClientFixture()
    const { sessions } = await fx.signUpDirect({ users: 2, threshold: 2 })
    const error = await createWallet(fx.client, { walletName: 'Shared', chains: ['ethereum'] }).catch(
      (e) => e,
    )
    expect(error).toBeInstanceOf(ConsensusNeededError)
    expect(error).toMatchObject({
      code: 'CONSENSUS_NEEDED',
      activity: { status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED' },
    })
    const { activity } = error as ConsensusNeededError
    expect((await getWallets(fx.client, {})).wallets).toEqual([])
    const { policyEvaluations } = await getPolicyEvaluations(fx.client, { activityId: activity.id })
    expect(policyEvaluations.length).toBeGreaterThan(0)

    switchSession(fx.client, { sessionId: sessions[1]?.id as string })
    const approved = await approveActivity(fx.client, { fingerprint: activity.fingerprint })
    expect(approved).toMatchObject({ id: activity.id, status: 'ACTIVITY_STATUS_COMPLETED' })
    expect((await getActivity(fx.client, { activityId: activity.id })).activity.status).toBe(
      'ACTIVITY_STATUS_COMPLETED',
    )
    expect((await getWallets(fx.client, {})).wallets.map((w) => w.walletName)).toEqual(['Shared'])
  })

  it('a rejection ends the activity as REJECTED', async () => {
    const fx = await createClientFixture()
    const { sessions } = await fx.signUpDirect({ users: 2, threshold: 2 })
    const error = (await createWallet(fx.client, { walletName: 'No' }).catch(
      (e) => e,
    )) as ConsensusNeededError
    switchSession(fx.client, { sessionId: sessions[1]?.id as string })
    const rejected = await rejectActivity(fx.client, { fingerprint: error.activity.fingerprint })
    expect(rejected.status).toBe('ACTIVITY_STATUS_REJECTED')
  })
})

/**
 * The local service executes activities synchronously, so to see polling we relabel its real
 * answers as PENDING on the way back (the service itself is untouched).
 */
function pendingFor(fx: Awaited<ReturnType<typeof createClientFixture>>, polls: number) {
  const seen: string[] = []
  let remaining = polls
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input)
    const response = await fx.harness.service.fetch(url, init)
    const isSubmit = url.includes('/submit/create_wallet')
    const isPoll = url.includes('/query/get_activity')
    if (!isSubmit && !isPoll) return response
    seen.push(isSubmit ? 'submit' : 'poll')
    const body = await response.json()
    if (remaining-- > 0) body.activity.status = 'ACTIVITY_STATUS_PENDING'
    return new Response(JSON.stringify(body), { status: response.status })
  }
  return { fetch, seen }
}

describe('activities that wait for a second factor', () => {
  it('come back AUTHENTICATORS_NEEDED at once, without polling until the timeout', async () => {
    const fx = await createClientFixture({
      polling: { intervalMs: 5, backoff: 1, maxIntervalMs: 5, timeoutMs: 60_000 },
    })
    const { userIds } = await fx.signUpDirect()
    // The user's passkey first: a policy only a passkey proves is refused to a user without one.
    await createAuthenticators(fx.client, {
      userId: userIds[0] as string,
      authenticators: [softPasskey().register()],
    })
    const policy = await submitActivity(fx.client, 'create_mfa_policy', {
      userId: userIds[0] as string,
      mfaPolicyName: 'wallets need a passkey',
      condition: "activity.resource == 'WALLET'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] }],
      order: 0,
    })
    expect(policy.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const started = Date.now()
    const held = await submitActivity(fx.client, 'create_wallet', { walletName: 'Held', accounts: [] })
    expect(held.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(Date.now() - started).toBeLessThan(5_000)
    expect((await getWallets(fx.client, {})).wallets).toEqual([])
  })
})

describe('polling pending activities', () => {
  it('polls get_activity with backoff until the activity completes', async () => {
    const base = await createClientFixture()
    const { fetch, seen } = pendingFor(base, 3)
    const client = base.reload({ fetch, polling: { intervalMs: 5, backoff: 2, timeoutMs: 5_000 } })
    await base.signUpDirect()
    await client.hydrate()
    const { walletId } = await createWallet(client, { walletName: 'Polled', chains: ['ethereum'] })
    expect(walletId).toBeTruthy()
    expect(seen).toEqual(['submit', 'poll', 'poll', 'poll'])
  })

  it('gives up with a typed POLL_TIMEOUT carrying the activity', async () => {
    const base = await createClientFixture()
    const { fetch } = pendingFor(base, 1_000)
    const client = base.reload({ fetch, polling: { intervalMs: 5, backoff: 1, timeoutMs: 60 } })
    await base.signUpDirect()
    await client.hydrate()
    await expect(createWallet(client, { walletName: 'Slow' })).rejects.toMatchObject({
      code: 'POLL_TIMEOUT',
      activity: { status: 'ACTIVITY_STATUS_PENDING' },
    })
  })
})

describe('equal activities submitted at once', () => {
  it('are two activities, not one request sent twice, even within one millisecond', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const { walletId } = await createWallet(fx.client, { walletName: 'Twice', chains: ['ethereum'] })
    const { accounts } = await getWalletAccounts(fx.client, { walletId })
    const payment = {
      signWith: accounts[0]!.address,
      payload: `0x${'ab'.repeat(32)}`,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    } as const
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.now())
    try {
      const [first, second] = await Promise.all([
        submitActivity(fx.client, 'sign_raw_payload', payment),
        submitActivity(fx.client, 'sign_raw_payload', payment),
      ])
      expect(first.status).toBe('ACTIVITY_STATUS_COMPLETED')
      expect(second.status).toBe('ACTIVITY_STATUS_COMPLETED')
      expect(second.id).not.toBe(first.id)
    } finally {
      now.mockRestore()
    }
  })
})
