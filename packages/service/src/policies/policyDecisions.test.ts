import { generateP256KeyPair } from '@turnkey/crypto'
import { serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Json,
  resultOf,
  type TestKey,
  testKey,
} from '../testing/harness.ts'

const X = '0x1111111111111111111111111111111111111111'
const Y = '0x2222222222222222222222222222222222222222'

const transfer = (to: string, value: bigint, nonce = 0) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 31337,
    nonce,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
    gas: 21000n,
    to: to as `0x${string}`,
    value,
  })

/**
 * A sub-organization whose only root user is the end user (`root`), with a wallet, an app back
 * end (`backend`, not root) and two approvers tagged `admin` (not root), as in delegated access.
 */
async function delegated() {
  const h = await createHarness()
  const root = testKey()
  const sub = await h.createSubOrganization({
    keys: [root],
    wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
  })
  const at = { organizationId: sub.organizationId }
  const asRoot = { ...at, as: root }
  const [backend, admin1, admin2] = [testKey(), testKey(), testKey()] as [TestKey, TestKey, TestKey]
  const { userTagId } = resultOf(
    'create_user_tag',
    await h.submit('create_user_tag', { userTagName: 'admin', userIds: [] }, asRoot),
  )
  const user = (name: string, key: TestKey, tags: string[]) => ({
    userName: name,
    apiKeys: [key.apiKey(name)],
    authenticators: [],
    oauthProviders: [],
    userTags: tags,
  })
  const { userIds } = resultOf(
    'create_users',
    await h.submit(
      'create_users',
      {
        users: [
          user('backend', backend, []),
          user('admin 1', admin1, [userTagId]),
          user('admin 2', admin2, [userTagId]),
        ],
      },
      asRoot,
    ),
  )
  const policy = async (params: Json) =>
    resultOf('create_policy', await h.submit('create_policy', { notes: '', ...params }, asRoot))
      .policyId as string
  let nonce = 0
  const sign = (as: TestKey, to: string, value = 1n) =>
    h.submit(
      'sign_transaction',
      {
        signWith: sub.addresses![0],
        type: 'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransaction: transfer(to, value, nonce++),
      },
      { ...at, as },
    )
  const evaluations = async (activityId: string) =>
    (await h.query('get_policy_evaluations', { activityId }, asRoot)).body.policyEvaluations.map(
      (evaluation: Json) => evaluation.policyEvaluations,
    )
  return { h, at, asRoot, root, backend, admin1, admin2, userIds, userTagId, policy, sign, evaluations }
}

const SIGN_TO_X = `activity.resource == 'WALLET' && activity.action == 'SIGN' && eth.tx.to == '${X}'`

describe('policy decisions through HTTP', () => {
  it('denies a non-root user implicitly when no policy matches (OUTCOME_DENY_IMPLICIT)', async () => {
    const t = await delegated()
    const refused = await t.sign(t.backend, X)
    expect(refused).toMatchObject({
      status: 403,
      body: { details: { errorCode: 'PERMISSION_DENIED', outcome: 'OUTCOME_DENY_IMPLICIT' } },
    })
    expect(refused.body.details.activityId).toBe(await lastActivityId(t))
    expect(refused.body.message).toContain('no policy of organization')
    const { activity } = (await t.h.query('get_activity', { activityId: await lastActivityId(t) }, t.asRoot))
      .body
    expect(activity.status).toBe('ACTIVITY_STATUS_FAILED')
    expect(await t.evaluations(activity.id)).toEqual([[{ outcome: 'OUTCOME_DENY_IMPLICIT' }]])
  })

  it('allows what an ALLOW policy matches and denies the rest implicitly, recording every policy', async () => {
    const t = await delegated()
    const allow = await t.policy({
      policyName: 'Back end pays X',
      effect: 'EFFECT_ALLOW',
      condition: SIGN_TO_X,
    })
    const other = await t.policy({
      policyName: 'Exports',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'EXPORT'",
    })
    const toX = await t.sign(t.backend, X)
    expect(toX.status).toBe(200)
    expect(toX.body.activity).toMatchObject({
      status: 'ACTIVITY_STATUS_COMPLETED',
      result: { signTransactionResult: { signedTransaction: expect.stringMatching(/^02/) } },
    })
    expect(await t.evaluations(toX.body.activity.id)).toEqual([
      [
        { outcome: 'OUTCOME_ALLOW' },
        { policyId: allow, outcome: 'OUTCOME_ALLOW' },
        { policyId: other, outcome: 'OUTCOME_DENY_IMPLICIT' },
      ],
    ])
    const toY = await t.sign(t.backend, Y)
    expect(toY.body.details).toMatchObject({
      errorCode: 'PERMISSION_DENIED',
      outcome: 'OUTCOME_DENY_IMPLICIT',
    })
    expect(await t.evaluations(await lastActivityId(t))).toEqual([
      [
        { outcome: 'OUTCOME_DENY_IMPLICIT' },
        { policyId: allow, outcome: 'OUTCOME_DENY_IMPLICIT' },
        { policyId: other, outcome: 'OUTCOME_DENY_IMPLICIT' },
      ],
    ])
    // Other activities stay closed to the back end.
    const wallet = await t.h.submit(
      'create_wallet',
      { walletName: 'mine', accounts: [] },
      { ...t.at, as: t.backend },
    )
    expect(wallet.body.details.outcome).toBe('OUTCOME_DENY_IMPLICIT')
  })

  it('lets a matching DENY win over a matching ALLOW (OUTCOME_DENY_EXPLICIT), and the root user bypass both', async () => {
    const t = await delegated()
    const allow = await t.policy({
      policyName: 'Back end pays X',
      effect: 'EFFECT_ALLOW',
      condition: SIGN_TO_X,
    })
    const deny = await t.policy({
      policyName: 'Nothing above 1 ETH',
      effect: 'EFFECT_DENY',
      condition: "activity.action == 'SIGN' && eth.tx.value > 1000000000000000000",
    })
    const small = await t.sign(t.backend, X, 10n ** 18n)
    expect(small.status).toBe(200)
    const big = await t.sign(t.backend, X, 10n ** 18n + 1n)
    expect(big).toMatchObject({
      status: 403,
      body: {
        message: "sign_transaction is denied by policy 'Nothing above 1 ETH'",
        details: { errorCode: 'PERMISSION_DENIED', outcome: 'OUTCOME_DENY_EXPLICIT' },
      },
    })
    expect(await t.evaluations(await lastActivityId(t))).toEqual([
      [
        { outcome: 'OUTCOME_DENY_EXPLICIT' },
        { policyId: allow, outcome: 'OUTCOME_ALLOW' },
        { policyId: deny, outcome: 'OUTCOME_DENY_EXPLICIT' },
      ],
    ])
    // The root quorum (the end user alone) is met: policies are recorded but bypassed.
    const byRoot = await t.sign(t.root, Y, 5n * 10n ** 18n)
    expect(byRoot.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await t.evaluations(byRoot.body.activity.id)).toEqual([
      [
        { outcome: 'OUTCOME_ALLOW' },
        { policyId: allow, outcome: 'OUTCOME_DENY_IMPLICIT' },
        { policyId: deny, outcome: 'OUTCOME_DENY_EXPLICIT' },
      ],
    ])
  })

  it('lets a policy naming PRIVATE_KEY open standalone keys to a non-root user', async () => {
    const t = await delegated()
    const asBackend = { ...t.at, as: t.backend }
    const key = {
      privateKeyName: 'hot',
      curve: 'CURVE_SECP256K1',
      privateKeyTags: [],
      addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
    }
    expect(
      (await t.h.submit('create_private_keys', { privateKeys: [key] }, asBackend)).body.details,
    ).toMatchObject({ errorCode: 'PERMISSION_DENIED', outcome: 'OUTCOME_DENY_IMPLICIT' })
    await t.policy({
      policyName: 'Back end makes keys',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'PRIVATE_KEY' && activity.action == 'CREATE'",
    })
    t.h.clock.advance(1) // the same body again would be a replay of the refused request
    const created = await t.h.submit('create_private_keys', { privateKeys: [key] }, asBackend)
    expect(created.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const { privateKeyId } = resultOf('create_private_keys', created).privateKeys[0]
    const exportIt = () =>
      t.h.submit(
        'export_private_key',
        { privateKeyId, targetPublicKey: generateP256KeyPair().publicKeyUncompressed },
        asBackend,
      )
    expect((await exportIt()).body.details.outcome).toBe('OUTCOME_DENY_IMPLICIT')
    const exports = await t.policy({
      policyName: 'Back end exports keys',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'PRIVATE_KEY' && activity.action == 'EXPORT'",
    })
    t.h.clock.advance(1)
    const exported = await exportIt()
    expect(exported.body.activity).toMatchObject({
      status: 'ACTIVITY_STATUS_COMPLETED',
      result: { exportPrivateKeyResult: { privateKeyId, exportBundle: expect.any(String) } },
    })
    expect((await t.evaluations(exported.body.activity.id))[0]).toContainEqual({
      policyId: exports,
      outcome: 'OUTCOME_ALLOW',
    })
  })

  it('gives a policy that fails to evaluate OUTCOME_ERROR without affecting the others', async () => {
    const t = await delegated()
    // EIP-1559 transactions have no gas_price: reading it is a runtime error.
    const broken = await t.policy({
      policyName: 'Cheap gas only',
      effect: 'EFFECT_DENY',
      condition: "activity.action == 'SIGN' && eth.tx.gas_price > 1",
    })
    const allow = await t.policy({
      policyName: 'Back end pays X',
      effect: 'EFFECT_ALLOW',
      condition: SIGN_TO_X,
    })
    const reply = await t.sign(t.backend, X)
    expect(reply.status).toBe(200)
    expect(await t.evaluations(reply.body.activity.id)).toEqual([
      [
        { outcome: 'OUTCOME_ALLOW' },
        { policyId: broken, outcome: 'OUTCOME_ERROR' },
        { policyId: allow, outcome: 'OUTCOME_ALLOW' },
      ],
    ])
  })

  it('waits for two tagged approvers (OUTCOME_REQUIRES_CONSENSUS), then runs the activity', async () => {
    const t = await delegated()
    const consensus = await t.policy({
      policyName: 'Two admins approve new wallets',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
      consensus: `approvers.filter(u, u.tags.contains('${t.userTagId}')).count() >= 2`,
    })
    const pending = (
      await t.h.submit(
        'create_wallet',
        { walletName: 'Ops', accounts: [ETHEREUM_ACCOUNT] },
        { ...t.at, as: t.backend },
      )
    ).body.activity
    expect(pending).toMatchObject({ status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED', votes: [expect.anything()] })
    const first = await t.h.submit(
      'approve_activity',
      { fingerprint: pending.fingerprint },
      { ...t.at, as: t.admin1 },
    )
    expect(first.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    // The back end (the submitter) is not tagged, so its own approval does not count.
    const second = await t.h.submit(
      'approve_activity',
      { fingerprint: pending.fingerprint },
      { ...t.at, as: t.admin2 },
    )
    expect(second.body.activity).toMatchObject({
      id: pending.id,
      status: 'ACTIVITY_STATUS_COMPLETED',
      result: { createWalletResult: { walletId: expect.any(String) } },
    })
    expect(await t.evaluations(pending.id)).toEqual([
      [
        { outcome: 'OUTCOME_REQUIRES_CONSENSUS' },
        { policyId: consensus, outcome: 'OUTCOME_REQUIRES_CONSENSUS' },
      ],
      [
        { outcome: 'OUTCOME_REQUIRES_CONSENSUS' },
        { policyId: consensus, outcome: 'OUTCOME_REQUIRES_CONSENSUS' },
      ],
      [{ outcome: 'OUTCOME_ALLOW' }, { policyId: consensus, outcome: 'OUTCOME_ALLOW' }],
    ])
  })

  it('rejects once neither the root quorum nor the policies can allow it (OUTCOME_REJECTED)', async () => {
    const t = await delegated()
    await t.policy({
      policyName: 'Two admins approve new wallets',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
      consensus: `approvers.filter(u, u.tags.contains('${t.userTagId}')).count() >= 2`,
    })
    const pending = (
      await t.h.submit('create_wallet', { walletName: 'No', accounts: [] }, { ...t.at, as: t.backend })
    ).body.activity
    const reject = (as: TestKey) =>
      t.h.submit('reject_activity', { fingerprint: pending.fingerprint }, { ...t.at, as })
    expect((await reject(t.admin1)).body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    // Two admins are no longer possible, but the end user (the root quorum) could still approve.
    expect((await reject(t.admin2)).body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    expect((await reject(t.root)).body.activity.status).toBe('ACTIVITY_STATUS_REJECTED')
    const outcomes = (await t.evaluations(pending.id)).map((list: Json[]) => list[0].outcome)
    expect(outcomes).toEqual([
      'OUTCOME_REQUIRES_CONSENSUS',
      'OUTCOME_REQUIRES_CONSENSUS',
      'OUTCOME_REQUIRES_CONSENSUS',
      'OUTCOME_REJECTED',
    ])
    expect((await t.h.service.store.all('wallets')).filter((w) => w.name === 'No')).toEqual([])
  })

  it('lets the root user approve what a policy is waiting on (the root quorum overrides)', async () => {
    const t = await delegated()
    await t.policy({
      policyName: 'Two admins',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'CREATE'",
      consensus: 'approvers.count() >= 3',
    })
    const pending = (
      await t.h.submit('create_wallet', { walletName: 'R', accounts: [] }, { ...t.at, as: t.backend })
    ).body.activity
    const approved = await t.h.submit('approve_activity', { fingerprint: pending.fingerprint }, t.asRoot)
    expect(approved.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })

  it('lets a policy open policy management to a non-root user', async () => {
    const t = await delegated()
    const create = {
      policyName: 'x',
      effect: 'EFFECT_DENY',
      condition: "activity.action == 'EXPORT'",
      notes: '',
    }
    expect((await t.h.submit('create_policy', create, { ...t.at, as: t.admin1 })).status).toBe(403)
    await t.policy({
      policyName: 'Admins manage policies',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'POLICY'",
      consensus: `approvers.any(u, u.tags.contains('${t.userTagId}'))`,
    })
    t.h.clock.advance(1)
    expect((await t.h.submit('create_policy', create, { ...t.at, as: t.admin1 })).status).toBe(200)
    // The back end is not tagged: its request waits for an admin's approval.
    const waiting = await t.h.submit(
      'create_policy',
      { ...create, policyName: 'y' },
      { ...t.at, as: t.backend },
    )
    expect(waiting.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  })
})

describe('policy keywords from real activities', () => {
  it('reads eth.eip_712, eth.eip_7702_authorization, wallet and wallet_account from sign_raw_payloads', async () => {
    const t = await delegated()
    const account = (await t.h.query('list_wallet_accounts', {}, t.asRoot)).body.accounts[0]
    const wallet = (await t.h.query('list_wallets', {}, t.asRoot)).body.wallets[0]
    await t.policy({
      policyName: 'Permits for USDC on chain 1 from Main',
      effect: 'EFFECT_ALLOW',
      condition: [
        "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS'",
        `wallet.id == '${wallet.walletId}' && wallet.label == 'Main' && !wallet.exported`,
        `wallet_account.address == '${account.address.toLowerCase()}'`,
        "eth.eip_712.primary_type == 'Permit' && eth.eip_712.domain.name == 'USDC'",
        'eth.eip_712.domain.chain_id == 1 && eth.eip_712.message.value <= 1000000',
      ].join(' && '),
    })
    await t.policy({
      policyName: 'Delegate only to the known contract',
      effect: 'EFFECT_ALLOW',
      condition: `eth.eip_7702_authorization.address == '${X}' && eth.eip_7702_authorization.chain_id == 31337`,
    })
    const typed = (name: string, value: number) =>
      JSON.stringify({
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'chainId', type: 'uint256' },
          ],
          Permit: [
            { name: 'spender', type: 'address' },
            { name: 'value', type: 'uint256' },
          ],
        },
        primaryType: 'Permit',
        domain: { name, chainId: 1 },
        message: { spender: Y, value: String(value) },
      })
    const sign = (payload: string, encoding: string) =>
      t.h.submit(
        'sign_raw_payloads',
        {
          signWith: account.address,
          payloads: [payload],
          encoding,
          hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
        },
        { ...t.at, as: t.backend },
      )
    expect((await sign(typed('USDC', 5), 'PAYLOAD_ENCODING_EIP712')).status).toBe(200)
    expect((await sign(typed('USDC', 5_000_000), 'PAYLOAD_ENCODING_EIP712')).body.details.outcome).toBe(
      'OUTCOME_DENY_IMPLICIT',
    )
    expect((await sign(typed('DAI', 5), 'PAYLOAD_ENCODING_EIP712')).body.details.outcome).toBe(
      'OUTCOME_DENY_IMPLICIT',
    )
    const authorization = (address: string) => JSON.stringify({ chainId: 31337, address, nonce: 0 })
    expect((await sign(authorization(X), 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION')).status).toBe(200)
    expect((await sign(authorization(Y), 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION')).status).toBe(403)
    // A plain payload has no eth.eip_712: both policies error or do not match, nothing allows it.
    const plain = await sign('00'.repeat(32), 'PAYLOAD_ENCODING_HEXADECIMAL')
    expect(plain.body.details.outcome).toBe('OUTCOME_DENY_IMPLICIT')
  })
})

/** The newest activity of the harness's store (a refused submit answers with an error, not the activity). */
async function lastActivityId(t: { h: Awaited<ReturnType<typeof createHarness>> }): Promise<string> {
  return (await t.h.service.store.all('activities')).at(-1)!.id
}
