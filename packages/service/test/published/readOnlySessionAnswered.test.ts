import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { ApiKeyStamper } from '@turnkey/api-key-stamper'
import { TurnkeyClient } from 'turnkey-http-6'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness } from '../../src/testing/harness.ts'
import { type ServedHarness, serveHarness } from '../support/servedHarness.ts'

/**
 * @turnkey/http 6.6's TurnkeyClient, unchanged, asking for a read-only session, whose token the
 * activity's record no longer keeps: the answer carries it, a request sent again (the same signed
 * bytes) is answered a working one, and so is the client's getActivity once a second factor let a
 * held request run (as @turnkey/core polls after `onMfaRequired`).
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

function keyPair() {
  const secret = p256.utils.randomSecretKey()
  return { apiPrivateKey: bytesToHex(secret), apiPublicKey: bytesToHex(p256.getPublicKey(secret, true)) }
}

/** A sub-organization whose root user holds the given key pairs, and their API key ids. */
async function account(...pairs: ReturnType<typeof keyPair>[]) {
  const sub = await h.createSubOrganization()
  const organizationId = sub.organizationId
  const userId = sub.userIds[0]!
  const added = await h.submit(
    'create_api_keys',
    {
      userId,
      apiKeys: pairs.map((pair, i) => ({
        apiKeyName: `published ${i}`,
        publicKey: pair.apiPublicKey,
        curveType: 'API_KEY_CURVE_P256',
      })),
    },
    { as: sub.keys[0], organizationId },
  )
  expect(added.status).toBe(200)
  return {
    organizationId,
    userId,
    apiKeyIds: added.body.activity.result.createApiKeysResult.apiKeyIds as string[],
  }
}

/** Whether `session` reads the organization's wallets. */
async function reads(session: string, organizationId: string): Promise<number> {
  const response = await fetch(`${baseUrl}/public/v1/query/list_wallets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Session': session },
    body: JSON.stringify({ organizationId }),
  })
  return response.status
}

describe('@turnkey/http 6.6 TurnkeyClient and read-only sessions kept out of their records', () => {
  it('answers the session, and a working one to the same signed request sent again; getActivity shows it to that key only', async () => {
    const pair = keyPair()
    const { organizationId } = await account(pair)
    const client = new TurnkeyClient({ baseUrl }, new ApiKeyStamper(pair))
    const signed = await client.stampCreateReadOnlySession({
      type: 'ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION',
      timestampMs: String(Date.now()),
      organizationId,
      parameters: {},
    })
    const send = async () => {
      const response = await fetch(signed.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [signed.stamp.stampHeaderName]: signed.stamp.stampHeaderValue,
        },
        body: signed.body,
      })
      expect(response.status).toBe(200)
      return (await response.json()) as {
        activity: {
          id: string
          result: { createReadOnlySessionResult: { session: string; sessionExpiry: string } }
        }
      }
    }
    const first = await send()
    const again = await send()
    expect(again.activity.id).toBe(first.activity.id)
    for (const { activity } of [first, again]) {
      expect(activity.result.createReadOnlySessionResult.sessionExpiry).toBe(
        first.activity.result.createReadOnlySessionResult.sessionExpiry,
      )
      expect(await reads(activity.result.createReadOnlySessionResult.session, organizationId)).toBe(200)
    }
    const polled = await client.getActivity({ organizationId, activityId: first.activity.id })
    expect(await reads(polled.activity.result.createReadOnlySessionResult!.session, organizationId)).toBe(200)
    // The organization's other readers (here its dev root, a parent's root user) see it emptied.
    const other = await h.query('get_activity', { organizationId, activityId: first.activity.id })
    expect(other.body.activity.result.createReadOnlySessionResult.session).toBe('')
  })

  it('a request an MFA policy held: the second key’s approval runs it, the asking client’s getActivity carries the session', async () => {
    const first = keyPair()
    const second = keyPair()
    const { organizationId, userId, apiKeyIds } = await account(first, second)
    const client = new TurnkeyClient({ baseUrl }, new ApiKeyStamper(first))
    const factor = new TurnkeyClient({ baseUrl }, new ApiKeyStamper(second))
    const policy = await client.createMfaPolicy({
      type: 'ACTIVITY_TYPE_CREATE_MFA_POLICY',
      timestampMs: String(Date.now()),
      organizationId,
      parameters: {
        userId,
        mfaPolicyName: 'read-only sessions need the second key',
        condition: "activity.type == 'ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION'",
        requiredAuthenticationMethods: [
          { any: [{ type: 'AUTHENTICATION_TYPE_API_KEY', id: apiKeyIds[1]! }] },
        ],
        order: 0,
      },
    })
    expect(policy.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const held = await client.createReadOnlySession({
      type: 'ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION',
      timestampMs: String(Date.now()),
      organizationId,
      parameters: {},
    })
    expect(held.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const approved = await factor.approveActivity({
      type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
      timestampMs: String(Date.now()),
      organizationId,
      parameters: { fingerprint: held.activity.fingerprint },
    })
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    const polled = await client.getActivity({ organizationId, activityId: held.activity.id })
    expect(await reads(polled.activity.result.createReadOnlySessionResult!.session, organizationId)).toBe(200)
  })
})
