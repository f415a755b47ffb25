// Sign-in attacks by a caller holding a key of their own: a session confined by a session profile
// reaching the operator's auth-proxy settings, and session lifetimes chosen by the caller, through
// the auth proxy and the activity API alike.
import { PROXY_CONFIG_HEADER, SETTINGS_ROUTES } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { MAX_SESSION_SECONDS } from '../domain/sessions.ts'
import {
  createHarness,
  type Harness,
  type Json,
  resultOf,
  type TestKey,
  testKey,
} from '../testing/harness.ts'

const APP = 'http://app.test'

/** A stamped `/dev/settings/update` of the parent organization. */
async function updateSettings(h: Harness, changes: Json, as: TestKey) {
  h.clock.advance(1)
  const body = JSON.stringify({
    organizationId: h.organizationId,
    timestampMs: String(h.clock.now()),
    settings: changes,
  })
  const [header, value] = as.stamp(body)
  return h.post(SETTINGS_ROUTES.update, body, { [header]: value })
}

/** A browser page of the app calling the auth proxy. */
async function proxy(h: Harness, path: string, body: Json) {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: APP,
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

describe('a session confined by a session profile', () => {
  it("cannot change the auth proxy's settings, though its user is a root user of the parent", async () => {
    const h = await createHarness()
    const { sessionProfileId } = resultOf(
      'create_session_profile',
      await h.submit('create_session_profile', { sessionProfileName: 'agent', scope: 'true' }),
    )
    const scoped = testKey()
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: scoped.publicKey, sessionProfileId }))
    const before = (await h.service.store.get('proxyConfigs', h.service.dev.authProxyConfigId!))!
    // A profile's session never manages logins, sessions or the organization: the proxy's
    // settings (enabled methods, session lifetime, OAuth endpoints) are all three.
    const reply = await updateSettings(h, { sessionExpirationSeconds: String(MAX_SESSION_SECONDS) }, scoped)
    expect([reply.status, reply.body.details?.errorCode]).toEqual([403, 'SESSION_SCOPE_DENIED'])
    expect((await h.service.store.get('proxyConfigs', before.id))!.settings).toEqual(before.settings)
    // The root user's own (unconfined) key still may.
    expect((await updateSettings(h, { sessionExpirationSeconds: '1200' }, h.root)).status).toBe(200)
  })
})

describe('session lifetimes the caller asks for', () => {
  it('the activity API refuses a login longer than the longest session, negative or non-numeric, naming the field', async () => {
    const h = await createHarness()
    for (const expirationSeconds of [String(MAX_SESSION_SECONDS + 1), '-60', 'forever', '1e9']) {
      const reply = await h.submit('stamp_login', { publicKey: testKey().publicKey, expirationSeconds })
      expect([reply.status, reply.body.details?.field], String(expirationSeconds)).toEqual([
        400,
        'parameters.expirationSeconds',
      ])
    }
    const longest = await h.submit('stamp_login', {
      publicKey: testKey().publicKey,
      expirationSeconds: String(MAX_SESSION_SECONDS),
    })
    expect(longest.status).toBe(200)
  })

  it('the auth proxy refuses them before any proof is spent, naming its own field', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    // The proxy routes by the token's claims before the activity verifies it; the lifetime is
    // judged before either looks at the proof.
    const part = (value: Json) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const unverifiedToken = `${part({ alg: 'ES256' })}.${part({ verification_type: 'OTP_TYPE_EMAIL', contact: 'a@example.com' })}.c2ln`
    for (const expirationSeconds of [String(MAX_SESSION_SECONDS + 1), '-60', 'forever']) {
      const reply = await proxy(h, 'otp_login', {
        verificationToken: unverifiedToken,
        publicKey: testKey().publicKey,
        organizationId: sub.organizationId,
        expirationSeconds,
      })
      expect([reply.status, reply.body.details?.field], expirationSeconds).toEqual([400, 'expirationSeconds'])
    }
  })
})
