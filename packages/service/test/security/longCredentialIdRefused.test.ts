// A passkey's credential id is the caller's choice (a "none" attestation signs nothing, and
// @simplewebauthn caps nothing) and goes to an indexed column, `authenticators.credentialId`. On
// PostgreSQL an index entry holds at most 2,704 bytes: a longer id failed the insert (SQLSTATE
// 54000) and the request, create_authenticators or an anonymous sign-up through the auth proxy,
// was answered 500 INTERNAL where the in-memory store registered it. An id past WebAuthn's 1,023
// bytes, sent or inside the attestation, is now refused on every store with a 400 naming it.

import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { isoCBOR } from '@simplewebauthn/server/helpers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { createHarness, type Harness } from '../../src/testing/harness.ts'
import { b64url, coseKeyOf } from '../../src/testing/webAuthnEncoding.ts'
import { deploymentOn } from '../support/twoInstances.ts'

const random = (bytes: number) => crypto.getRandomValues(new Uint8Array(bytes))

/**
 * Registration params of a software passkey whose attested credential id is `credentialId` (any
 * length), sent as `sentId` (the same id unless given), its COSE public key padded by `coseKeyPadding` bytes.
 */
function passkeyWithId(credentialId: Uint8Array, sentId: Uint8Array = credentialId, coseKeyPadding = 0) {
  const privateKey = p256.utils.randomSecretKey()
  // A COSE key with a field of its own (label -100) as long as asked: its hex is indexed too.
  const coseKey = isoCBOR.decodeFirst<Map<number, unknown>>(new Uint8Array(coseKeyOf(privateKey)))
  if (coseKeyPadding > 0) coseKey.set(-100, random(coseKeyPadding))
  const length = new Uint8Array(2)
  new DataView(length.buffer).setUint16(0, credentialId.length)
  const authData = concatBytes(
    sha256(utf8ToBytes('localhost')),
    new Uint8Array([0x45]),
    new Uint8Array(4),
    new Uint8Array(16),
    length,
    credentialId,
    isoCBOR.encode(coseKey as never),
  )
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]) as never,
  )
  const challenge = b64url(crypto.getRandomValues(new Uint8Array(32)))
  return {
    authenticatorName: 'long id',
    challenge,
    attestation: {
      credentialId: b64url(sentId),
      clientDataJson: b64url(
        utf8ToBytes(
          JSON.stringify({
            type: 'webauthn.create',
            challenge,
            origin: 'http://localhost:5173',
            crossOrigin: false,
          }),
        ),
      ),
      attestationObject: b64url(attestationObject),
      transports: ['AUTHENTICATOR_TRANSPORT_INTERNAL'],
    },
  }
}

/** An end user registers `passkey` in their own sub-organization: the status and the error's field. */
async function register(h: Harness, passkey: ReturnType<typeof passkeyWithId>) {
  const sub = await h.createSubOrganization()
  const reply = await h.submit(
    'create_authenticators',
    { userId: sub.userIds[0], authenticators: [passkey] },
    { as: sub.keys[0]!, organizationId: sub.organizationId },
  )
  const details = reply.body.details as { field?: string } | undefined
  return {
    status: reply.status,
    ...(reply.status === 200 ? {} : { field: details?.field ?? reply.body.field }),
  }
}

async function proxySignUp(h: Harness, passkey: ReturnType<typeof passkeyWithId>) {
  const res = await h.service.app.request('/v1/signup', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: 'http://localhost:5173',
    },
    body: JSON.stringify({ userName: 'anyone', authenticators: [passkey], apiKeys: [], oauthProviders: [] }),
  })
  const body = (await res.json()) as { details?: { field?: string }; field?: string }
  return { status: res.status, ...(res.status === 200 ? {} : { field: body.details?.field ?? body.field }) }
}

let cluster: PostgresCluster
let pg: Harness

beforeAll(async () => {
  cluster = await startPostgres()
  pg = await deploymentOn(cluster, 'long_credential_id').open()
}, 600_000)

afterAll(async () => {
  await pg?.service.close()
  await cluster?.dispose()
}, 60_000)

const SENT = 'parameters.authenticators[0].attestation.credentialId'
const ATTESTED = 'parameters.authenticators[0].attestation.attestationObject'

describe('a passkey credential id longer than WebAuthn allows', { timeout: 120_000 }, () => {
  for (const [store, harness] of [
    ['memory', () => createHarness()],
    ['PostgreSQL', async () => pg],
  ] as const)
    it(`is refused naming the field, 400 not 500 (${store})`, async () => {
      const h = await harness()
      // 3,000 random bytes: 4,000 base64url characters, which pglz does not shrink below 2,704.
      expect(await register(h, passkeyWithId(random(3000)))).toEqual({ status: 400, field: SENT })
      // Sent short, attested long.
      expect(await register(h, passkeyWithId(random(3000), random(16)))).toEqual({
        status: 400,
        field: ATTESTED,
      })
      // A COSE public key of 2,000 bytes (4,000 hex characters).
      expect(await register(h, passkeyWithId(random(16), undefined, 2000))).toEqual({
        status: 400,
        field: ATTESTED,
      })
      // WebAuthn's longest id registers.
      expect(await register(h, passkeyWithId(random(1023)))).toEqual({ status: 200 })
    })

  it('an anonymous proxy sign-up carrying one gets a 400 naming the field on PostgreSQL', async () => {
    // Named as the sub-organization's creation the proxy submits names it (rootUsers[0]).
    expect(await proxySignUp(pg, passkeyWithId(random(3000)))).toEqual({
      status: 400,
      field: expect.stringMatching(/authenticators\[0\]\.attestation\.credentialId$/),
    })
  })
})
