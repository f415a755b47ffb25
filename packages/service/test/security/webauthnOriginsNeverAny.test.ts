// An empty `[webauthn] origins` list once meant "accept passkeys from any origin" in production:
// `webauthnOptions` took it over `proxy.allowed_origins` (`??`) and then dropped it, and the
// runtime reads no `origins` as the dev service's "any origin". The schema now refuses the empty
// list (config/loadConfig.test.ts), and `webauthnOptions` falls back past one, so the runtime it
// makes refuses a passkey used on a page outside the apps' origins (another subdomain of the rp
// id, user content), at registration and at a stamp.
import { describe, expect, it } from 'vitest'
import { webauthnOptions } from '../../src/config/sections/webauthn.ts'
import { createHarness, resultOf, softPasskey } from '../../src/testing/harness.ts'

describe('a runtime made from an empty [webauthn] origins list', () => {
  const webauthn = webauthnOptions(
    { origins: [] },
    { publicUrl: 'http://localhost', allowedOrigins: ['http://localhost:5173'] },
  )
  const signUp = (h: Awaited<ReturnType<typeof createHarness>>, passkey: ReturnType<typeof softPasskey>) => {
    h.clock.advance(1)
    return h.submit('create_sub_organization', {
      subOrganizationName: 'person',
      rootUsers: [{ userName: 'p', apiKeys: [], authenticators: [passkey.register()], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    })
  }

  it('refuses a passkey registered on an origin outside proxy.allowed_origins, naming the attestation', async () => {
    expect(webauthn.origins).toEqual(['http://localhost:5173'])
    const h = await createHarness({ webauthn })
    const elsewhere = await signUp(h, softPasskey({ origin: 'https://user-content.localhost' }))
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(400)
    expect(elsewhere.body.details?.field).toBe('parameters.rootUsers[0].authenticators[0].attestation')
  })

  it("accepts one on the app's origin, and refuses a stamp whose client data names another page", async () => {
    const h = await createHarness({ webauthn })
    const passkey = softPasskey()
    const made = resultOf('create_sub_organization', await signUp(h, passkey))
    const organizationId = made.subOrganizationId as string
    h.clock.advance(1)
    expect((await h.query('whoami', { organizationId }, { as: passkey, organizationId })).status).toBe(200)
    // A second passkey of that user, used on another page of the rp id: its row written as the
    // first one's (registration on that page is refused above), so only the stamp is judged here.
    const elsewhere = softPasskey({ origin: 'https://user-content.localhost' })
    const [row] = await h.service.store.findBy('authenticators', 'credentialId', passkey.credentialId)
    const cose = Buffer.from(elsewhere.cosePublicKey, 'base64url')
    await h.service.store.transaction((tx) =>
      tx.put('authenticators', {
        ...row!,
        id: `${row!.id}-elsewhere`,
        credentialId: elsewhere.credentialId,
        cosePublicKey: elsewhere.cosePublicKey,
        publicKeyHex: cose.toString('hex'),
      }),
    )
    h.clock.advance(1)
    const stamped = await h.query('whoami', { organizationId }, { as: elsewhere, organizationId })
    expect(stamped.status, JSON.stringify(stamped.body)).toBe(401)
    expect(JSON.stringify(stamped.body)).toMatch(/origin/i)
  })
})
