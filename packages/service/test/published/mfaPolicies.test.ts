import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { ApiKeyStamper } from '@turnkey/api-key-stamper'
import { TurnkeyClient } from 'turnkey-http-6'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness } from '../../src/testing/harness.ts'
import { type ServedHarness, serveHarness } from '../support/servedHarness.ts'

/**
 * @turnkey/http 6.6's TurnkeyClient, unchanged, against the local service: only its base URL and
 * API key point at it. It creates, lists, reads, updates and deletes MFA policies, and sees an
 * activity a policy matches come back ACTIVITY_STATUS_AUTHENTICATORS_NEEDED.
 */

let h: Harness
let baseUrl: string
let served: ServedHarness | undefined

beforeAll(async () => {
  served = await serveHarness()
  ;({ h, baseUrl } = served)
}, 60_000)

afterAll(async () => {
  await served?.close()
})

/** A P-256 API key pair as @turnkey/api-key-stamper takes it. */
function keyPair() {
  const secret = p256.utils.randomSecretKey()
  return { apiPrivateKey: bytesToHex(secret), apiPublicKey: bytesToHex(p256.getPublicKey(secret, true)) }
}

describe('@turnkey/http 6.6 TurnkeyClient and MFA policies, unchanged', () => {
  it('creates, lists, reads, updates and deletes an MFA policy, satisfying it with approveActivity as the published docs say', async () => {
    const sub = await h.createSubOrganization()
    const organizationId = sub.organizationId
    const userId = sub.userIds[0]!
    // The sub-organization's root user holds two keys of its own: one acts, the other is its second factor.
    const first = keyPair()
    const second = keyPair()
    const added = await h.submit(
      'create_api_keys',
      {
        userId,
        apiKeys: [first, second].map((pair, i) => ({
          apiKeyName: `published ${i}`,
          publicKey: pair.apiPublicKey,
          curveType: 'API_KEY_CURVE_P256',
        })),
      },
      { as: sub.keys[0], organizationId },
    )
    expect(added.status).toBe(200)
    const secondKeyId = added.body.activity.result.createApiKeysResult.apiKeyIds[1] as string
    const client = new TurnkeyClient({ baseUrl }, new ApiKeyStamper(first))
    const factor = new TurnkeyClient({ baseUrl }, new ApiKeyStamper(second))
    const timestampMs = () => String(Date.now())
    const steps = [{ any: [{ type: 'AUTHENTICATION_TYPE_API_KEY' as const, id: secondKeyId }] }]
    const approve = (fingerprint: string) =>
      factor.approveActivity({
        type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
        timestampMs: timestampMs(),
        organizationId,
        parameters: { fingerprint },
      })

    const created = await client.createMfaPolicy({
      type: 'ACTIVITY_TYPE_CREATE_MFA_POLICY',
      timestampMs: timestampMs(),
      organizationId,
      parameters: {
        userId,
        mfaPolicyName: 'wallets need the second key',
        condition: "activity.resource == 'WALLET'",
        requiredAuthenticationMethods: steps,
        order: 0,
        notes: 'step-up',
      },
    })
    expect(created.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const mfaPolicyId = created.activity.result.createMfaPolicyResult?.mfaPolicyId as string
    expect(typeof mfaPolicyId).toBe('string')

    const listed = await client.getMfaPolicies({ organizationId, userId })
    expect(listed.mfaPolicies).toEqual([
      expect.objectContaining({
        mfaPolicyId,
        mfaPolicyName: 'wallets need the second key',
        condition: "activity.resource == 'WALLET'",
        requiredAuthenticationMethods: steps,
        order: 0,
        notes: 'step-up',
      }),
    ])
    expect((await client.getMfaPolicy({ organizationId, userId, mfaPolicyId })).mfaPolicy.mfaPolicyId).toBe(
      mfaPolicyId,
    )

    // A matched activity comes back waiting; the second key's approval runs it.
    const wallet = await client.createWallet({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: timestampMs(),
      organizationId,
      parameters: {
        walletName: 'guarded',
        accounts: [
          {
            curve: 'CURVE_SECP256K1',
            pathFormat: 'PATH_FORMAT_BIP32',
            path: "m/44'/60'/0'/0/0",
            addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
          },
        ],
      },
    })
    expect(wallet.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const status = await client.getMfaStatus({ organizationId, activityId: wallet.activity.id })
    expect(status.mfaStatuses).toEqual([
      expect.objectContaining({ mfaPolicyId, userId, satisfied: false, requiredMethods: steps }),
    ])
    const approved = await approve(wallet.activity.fingerprint)
    expect(approved.activity.id).toBe(wallet.activity.id)
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect((await client.getWallets({ organizationId })).wallets).toHaveLength(1)

    // A user's change to a policy on them waits for that policy's steps, whatever its condition.
    const updated = await client.updateMfaPolicy({
      type: 'ACTIVITY_TYPE_UPDATE_MFA_POLICY',
      timestampMs: timestampMs(),
      organizationId,
      parameters: { userId, mfaPolicyId, order: 5 },
    })
    expect(updated.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect((await approve(updated.activity.fingerprint)).activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect((await client.getMfaPolicy({ organizationId, userId, mfaPolicyId })).mfaPolicy.order).toBe(5)

    const removed = await client.deleteMfaPolicy({
      type: 'ACTIVITY_TYPE_DELETE_MFA_POLICY',
      timestampMs: timestampMs(),
      organizationId,
      parameters: { userId, mfaPolicyId },
    })
    expect(removed.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const done = await approve(removed.activity.fingerprint)
    expect(done.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(done.activity.result.deleteMfaPolicyResult?.mfaPolicyId).toBe(mfaPolicyId)
    expect((await client.getMfaPolicies({ organizationId, userId })).mfaPolicies).toEqual([])
  })
})
