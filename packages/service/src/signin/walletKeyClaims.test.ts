// A wallet's public key is no secret (a Solana key is its address; an Ethereum key is recovered
// from any transaction it signed), so anyone may register it in an account of their own. Such a
// registration must route nobody's sign-in: a wallet sign-in names the parent organization (the
// client does not know its sub-organization yet), and it once landed in the first account holding
// the key, so an end user who registered a stranger's wallet key first had that person signed in
// to an account the attacker controls, and deposits to "their" embedded wallet went to the
// attacker. A registration routes a sign-in once the key has proven itself there (it signed in
// there naming the account, or the operator registered it), or when the account is one only the
// key gets into (a wallet sign-up's): whoever made that, its only way in is the key.
import { decodeJwtClaims, PROXY_CONFIG_HEADER, type SessionClaims } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf, type TestKey, testKey } from '../testing/harness.ts'

function proxy(h: Harness) {
  const headers = {
    'content-type': 'application/json',
    [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
    Origin: 'http://localhost:5173',
  }
  return {
    /** The proxy's account lookup, as loginOrSignupWithWallet asks it first. */
    async lookup(key: TestKey): Promise<string | null> {
      const reply = await h.service.app.request('/v1/account', {
        method: 'POST',
        headers,
        body: JSON.stringify({ filterType: 'PUBLIC_KEY', filterValue: key.publicKey }),
      })
      expect(reply.status).toBe(200)
      return ((await reply.json()) as { organizationId: string | null }).organizationId
    },
    /** An anonymous wallet sign-up through the proxy, the wallet key as the user's API key. */
    async signUp(key: TestKey, extraKeys: TestKey[] = []): Promise<string> {
      const reply = await h.service.app.request('/v1/signup', {
        method: 'POST',
        headers,
        body: JSON.stringify({
          userName: 'wallet user',
          apiKeys: [key, ...extraKeys].map((k) => k.apiKey(`wallet-auth:${k.publicKey}`)),
        }),
      })
      const body = (await reply.json()) as { organizationId: string }
      expect(reply.status, JSON.stringify(body)).toBe(200)
      return body.organizationId
    },
  }
}

/** An Ethereum wallet key whose compressed bytes also decode as a P-256 point (about half do). */
function ethereumKeyAlsoOnP256(): TestKey {
  for (let i = 0; i < 64; i++) {
    const key = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
    try {
      p256.Point.fromBytes(hexToBytes(key.publicKey))
      return key
    } catch {}
  }
  throw new Error('no such key in 64 tries')
}

/** A wallet sign-in: `stamp_login` stamped by the wallet, naming the parent; where it lands. */
async function walletLogin(h: Harness, wallet: TestKey, organizationId = h.organizationId) {
  const reply = await h.submit(
    'stamp_login',
    { publicKey: testKey().publicKey },
    { as: wallet, organizationId },
  )
  if (reply.status !== 200) return { status: reply.status, message: String(reply.body.message) }
  return {
    status: 200,
    organizationId: decodeJwtClaims<SessionClaims>(resultOf('stamp_login', reply).session).organization_id,
  }
}

describe('a wallet key registered by someone else', () => {
  it("routes no sign-in: the victim's sign-up and every later login land in the victim's account", async () => {
    const h = await createHarness()
    const { lookup, signUp } = proxy(h)
    const victimWallet = testKey('SIGNATURE_SCHEME_TK_API_ED25519')
    // An attacker with an account of their own registers the victim's wallet key to their user...
    const attacker = await h.createSubOrganization({ name: 'attacker' })
    resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        { userId: attacker.userIds[0], apiKeys: [victimWallet.apiKey('wallet-auth')] },
        { as: attacker.keys[0]!, organizationId: attacker.organizationId },
      ),
    )
    // ... and signs up anonymously with it too, beside a key of their own.
    const squatted = await signUp(victimWallet, [testKey()])

    // The victim's wallet sign-in: the lookup finds no account (it named the attacker's), a login
    // finds none either, so the victim signs up and the stamped login lands in the account made.
    expect(await lookup(victimWallet)).toBeNull()
    const early = await walletLogin(h, victimWallet)
    expect(early).toMatchObject({ status: 401 })
    expect(early.message).toContain('has not signed in to an account of this organization yet')
    const victim = await signUp(victimWallet)
    expect(await lookup(victimWallet)).toBe(victim)
    expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
    // The key proved itself there: later logins and lookups find it, whatever is registered next.
    await signUp(victimWallet, [testKey()])
    await signUp(victimWallet)
    expect(await lookup(victimWallet)).toBe(victim)
    expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
    expect([attacker.organizationId, squatted]).not.toContain(victim)
  })

  it("an account made with only the victim's key is the victim's: whoever made it has no way in", async () => {
    const h = await createHarness()
    const { lookup, signUp } = proxy(h)
    const victimWallet = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
    const made = await signUp(victimWallet)
    expect(await lookup(victimWallet)).toBe(made)
    const login = await walletLogin(h, victimWallet)
    expect(login).toEqual({ status: 200, organizationId: made })
    // Its only credentials are the wallet key and the session the login just made.
    const keys = await h.query('get_api_keys', { organizationId: made }, { as: victimWallet })
    expect(keys.body.apiKeys).toHaveLength(2)
    const users = await h.query('list_users', { organizationId: made }, { as: victimWallet })
    expect(users.body.users).toHaveLength(1)
    expect(users.body.users[0].authenticators).toEqual([])
  })

  it('signs in keys the operator registered, and a key the user added once it signed in naming its account', async () => {
    const h = await createHarness()
    const wallet = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1')
    // The operator's back end (a root user of the parent) makes the account with the wallet key.
    const made = await h.createSubOrganization({ keys: [wallet] })
    expect(await walletLogin(h, wallet)).toEqual({ status: 200, organizationId: made.organizationId })
    expect(await proxy(h).lookup(wallet)).toBe(made.organizationId)

    // A second wallet the user adds to their account (which has other credentials): it routes no
    // sign-in from the parent until it signed in naming the account.
    const added = testKey('SIGNATURE_SCHEME_TK_API_ED25519')
    resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        { userId: made.userIds[0], apiKeys: [added.apiKey('second wallet')] },
        { as: wallet, organizationId: made.organizationId },
      ),
    )
    expect(await proxy(h).lookup(added)).toBeNull()
    const before = await walletLogin(h, added)
    expect(before.status).toBe(401)
    expect(before.message).toContain('sign in naming your organization')
    expect(await walletLogin(h, added, made.organizationId)).toEqual({
      status: 200,
      organizationId: made.organizationId,
    })
    expect(await walletLogin(h, added)).toEqual({ status: 200, organizationId: made.organizationId })
    expect(await proxy(h).lookup(added)).toBe(made.organizationId)
  })

  it('an account someone used before the key signed in there routes no sign-in, even once the key is its only way in', async () => {
    const h = await createHarness()
    const { lookup, signUp } = proxy(h)
    const victimWallet = testKey('SIGNATURE_SCHEME_TK_API_ED25519')
    // The attacker signs up with the victim's key beside their own, imports a wallet whose secret
    // they keep (here: any activity in the account), then deletes their own key.
    const own = testKey()
    const trap = await signUp(victimWallet, [own])
    const as = { as: own, organizationId: trap }
    const keys = await h.query('get_api_keys', { organizationId: trap }, { as: own })
    const ownKeyId = keys.body.apiKeys.find(
      (key: { credential: { publicKey: string } }) => key.credential.publicKey === own.publicKey,
    ).apiKeyId
    resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'planted', accounts: [] }, as))
    const userId = (await h.query('list_users', { organizationId: trap }, { as: own })).body.users[0].userId
    resultOf('delete_api_keys', await h.submit('delete_api_keys', { userId, apiKeyIds: [ownKeyId] }, as))
    // The victim's key is now that account's only way in, yet it finds it neither by lookup nor login.
    expect(await lookup(victimWallet)).toBeNull()
    expect(await walletLogin(h, victimWallet)).toMatchObject({ status: 401 })
    const victim = await signUp(victimWallet)
    expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
  })

  it("a login naming a stranger's wallet key as its session key routes nothing, nor blocks the stranger", async () => {
    const h = await createHarness()
    const { lookup, signUp } = proxy(h)
    const victimWallet = ethereumKeyAlsoOnP256()
    const attacker = await h.createSubOrganization({ name: 'attacker' })
    const as = { as: attacker.keys[0]!, organizationId: attacker.organizationId }
    // The key as an API key of the attacker's user, and as the session key of the attacker's own
    // login: the login names the key without its signature, and its bytes are a P-256 point too.
    resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        { userId: attacker.userIds[0], apiKeys: [victimWallet.apiKey('w')] },
        as,
      ),
    )
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: victimWallet.publicKey }, as))
    // Neither finds the attacker's account; the victim's sign-up and sign-in land in their own.
    expect(await lookup(victimWallet)).toBeNull()
    expect(await walletLogin(h, victimWallet)).toMatchObject({ status: 401 })
    const victim = await signUp(victimWallet)
    expect(await lookup(victimWallet)).toBe(victim)
    expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
  })
})
