// The organization's first `latchkey_init_user_import` calls raced on both instances answer one
// import key. `latchkey_import_user` raced across two service instances on one PostgreSQL database, where its
// transaction is a snapshot run (no SERIALIZABLE transaction): the same external id sent six
// times at once makes one person, and one contact claimed by six different people at once goes to
// exactly one of them; every other claim is refused naming the field. An import racing a
// pregeneration (`create_sub_organization`, SERIALIZABLE) or a sign-up by verification token of the
// same e-mail or OAuth identity meets the claim's primary key (kernel/accountClaims.ts): one of them
// is refused. A deletion racing an import of the deleted account's e-mail releases its claim in
// its own transaction: the import is refused before it commits and goes through after. One wallet
// bundle imported under six external ids at once opens for exactly one of them.
import { decodeJwtClaims, PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { hpkeSeal } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { english, generateMnemonic, mnemonicToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { accountClaimId } from '../../src/kernel/accountClaims.ts'
import { oidcNonce } from '../../src/signin/oauth/oidcNonce.ts'
import { signInState } from '../../src/signin/signInState.ts'
import {
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  resultOf,
  softPasskey,
  testKey,
} from '../../src/testing/harness.ts'
import { twoInstances } from '../support/twoInstances.ts'

let cluster: PostgresCluster
let a: Harness
let b: Harness
let importKey: Uint8Array
let firstInits: Awaited<ReturnType<Harness['submit']>>[]

/** The import key (`targetPublic`, hex) a `latchkey_init_user_import` reply's bundle answers. */
const targetOf = (reply: Awaited<ReturnType<Harness['submit']>>) => {
  const bundle = JSON.parse(resultOf('latchkey_init_user_import', reply).importBundle) as { data: string }
  return (JSON.parse(new TextDecoder().decode(hexToBytes(bundle.data))) as { targetPublic: string })
    .targetPublic
}

beforeAll(async () => {
  cluster = await startPostgres()
  ;[a, b] = await twoInstances(cluster, 'import_race')
  // The organization's first calls, six at once across both instances (distinct timestamps, so
  // none is a replay of another): the first makes the import key; the test below checks they agree.
  firstInits = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      (i % 2 ? b : a).submit('latchkey_init_user_import', {}, { timestampMs: String(Date.now() + i) }),
    ),
  )
  importKey = hexToBytes(targetOf(firstInits[0]!))
}, 600_000)

afterAll(async () => {
  await a?.service.close()
  await b?.service.close()
  await cluster?.dispose()
}, 60_000)

const wallet = (mnemonic: string) => ({
  walletName: 'Main',
  encryptedBundle: JSON.stringify(
    hpkeSeal({ plaintext: utf8ToBytes(mnemonic), receiverPublicKey: importKey }),
  ),
  accounts: [ETHEREUM_ACCOUNT],
})

const subOrganizations = async () =>
  (await a.service.store.findBy('organizations', 'parentOrganizationId', a.service.dev.organizationId)).length

describe('latchkey_init_user_import across two instances on PostgreSQL', () => {
  // A secret encrypted to an answer that lost the race would never open.
  it('the first calls at once, on both instances, answer one import key, the one stored', async () => {
    expect(firstInits.map((reply) => reply.status)).toEqual(Array(6).fill(200))
    const stored = await a.service.store.get('importKeys', a.service.dev.organizationId)
    expect(new Set(firstInits.map(targetOf))).toEqual(new Set([stored!.publicKey]))
  })
})

describe('latchkey_import_user across two instances on PostgreSQL', () => {
  it('the same external id sent six times at once, half to each instance, makes one person with one wallet', async () => {
    const mnemonic = generateMnemonic(english)
    const before = await subOrganizations()
    // Distinct bodies (names, bundles), so each is an activity of its own and not a replay.
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? b : a).submit('latchkey_import_user', {
          externalId: 'race-1',
          userName: `attempt ${i}`,
          email: 'race-1@example.com',
          wallets: [wallet(mnemonic)],
        }),
      ),
    )
    expect(replies.map((reply) => reply.status)).toEqual(Array(6).fill(200))
    const results = replies.map((reply) => resultOf('latchkey_import_user', reply))
    expect(results.filter((result) => !result.skipped)).toHaveLength(1)
    expect(new Set(results.map((result) => result.subOrganizationId)).size).toBe(1)
    expect(await subOrganizations()).toBe(before + 1)
    const accounts = await a.service.store.findBy(
      'walletAccounts',
      'organizationId',
      results[0]!.subOrganizationId,
    )
    expect(accounts.map((account) => account.address)).toEqual([mnemonicToAccount(mnemonic).address])
    expect(
      await a.service.store.findBy('wallets', 'organizationId', results[0]!.subOrganizationId),
    ).toHaveLength(1)
  })

  it('one e-mail claimed by six people at once goes to exactly one; the others are refused naming it', async () => {
    const before = await subOrganizations()
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? b : a).submit('latchkey_import_user', {
          externalId: `claimant-${i}`,
          email: 'Contested@example.com',
          wallets: [wallet(generateMnemonic(english))],
        }),
      ),
    )
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of replies.filter((r) => r.status !== 200)) {
      expect(reply.status).toBe(409)
      expect(reply.body.details?.field).toBe('parameters.email')
    }
    expect(await subOrganizations()).toBe(before + 1)
    // The refused people left nothing behind: no wallet without its person.
    const imported = await a.service.store.findBy(
      'importedUsers',
      'organizationId',
      a.service.dev.organizationId,
    )
    expect(imported.filter((row) => row.externalId.startsWith('claimant-'))).toHaveLength(1)
    const orgs = await a.service.store.findBy(
      'organizations',
      'parentOrganizationId',
      a.service.dev.organizationId,
    )
    for (const org of orgs) expect(imported.map((row) => row.subOrganizationId)).toContain(org.id)
  })
  // A bundle copied out of a person's activity record (a parent root credential can read it) and
  // raced against the person's import: it opens once, into one account.
  it('one wallet bundle imported by six people at once goes to exactly one; the others are refused naming it', async () => {
    const before = await subOrganizations()
    const { encryptedBundle } = wallet(generateMnemonic(english))
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? b : a).submit('latchkey_import_user', {
          externalId: `bundle-${i}`,
          wallets: [{ walletName: 'Main', encryptedBundle, accounts: [ETHEREUM_ACCOUNT] }],
        }),
      ),
    )
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of replies.filter((r) => r.status !== 200)) {
      expect(reply.status).toBe(409)
      expect(reply.body.details?.field).toBe('parameters.wallets[0].encryptedBundle')
    }
    expect(await subOrganizations()).toBe(before + 1)
  })
})

describe('an import racing a pregeneration of the same contact or identity, across two instances', () => {
  const pregenerate = (h: Harness, user: Record<string, unknown>) =>
    h.submit(
      'create_sub_organization',
      {
        subOrganizationName: 'pregenerated',
        rootUsers: [{ userName: 'p', apiKeys: [], authenticators: [], oauthProviders: [], ...user }],
        rootQuorumThreshold: 1,
      },
      { type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8' },
    )

  it('an import and a pregeneration of one e-mail at once: exactly one account holds it', async () => {
    for (let round = 0; round < 3; round++) {
      const email = `both-${round}@example.com`
      const before = await subOrganizations()
      const [imported, pregenerated] = await Promise.all([
        a.submit('latchkey_import_user', { externalId: `both-${round}`, email }),
        b.submit('create_sub_organization', {
          subOrganizationName: 'pregenerated',
          rootUsers: [
            { userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] },
          ],
          rootQuorumThreshold: 1,
        }),
      ])
      expect([imported.status, pregenerated.status].sort()).toEqual([200, 409])
      const refused = imported.status === 409 ? imported : pregenerated
      expect(refused.body.details?.field).toBe(
        imported.status === 409 ? 'parameters.email' : 'parameters.rootUsers[0].userEmail',
      )
      expect(await subOrganizations()).toBe(before + 1)
      const found = await a.query('list_suborgs', {
        organizationId: a.organizationId,
        filterType: 'EMAIL',
        filterValue: email,
      })
      expect(found.body.organizationIds).toHaveLength(1)
    }
  })

  it('an import and a pregeneration of one OAuth identity at once: exactly one account holds it', async () => {
    for (let round = 0; round < 3; round++) {
      const subject = `race-subject-${round}`
      const before = await subOrganizations()
      const [imported, pregenerated] = await Promise.all([
        a.submit('latchkey_import_user', {
          externalId: `oauth-${round}`,
          oauthProviders: [{ issuer: 'https://accounts.google.com', subject }],
        }),
        pregenerate(b, {
          oauthProviders: [
            {
              providerName: 'google',
              oidcClaims: { iss: 'https://accounts.google.com', sub: subject, aud: 'app' },
            },
          ],
        }),
      ])
      expect([imported.status, pregenerated.status].sort()).toEqual([200, 409])
      expect(await subOrganizations()).toBe(before + 1)
      const holders = (await a.service.store.findBy('oauthProviders', 'subject', subject)).map(
        (row) => row.organizationId,
      )
      expect(holders).toHaveLength(1)
    }
  })
})

/** A browser page calling instance `h`'s auth proxy (`/v1/<path>`). */
async function proxy(h: Harness, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: 'http://app.test',
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

const accountsOf = async (email: string) =>
  (
    await a.query('list_suborgs', {
      organizationId: a.organizationId,
      filterType: 'EMAIL',
      filterValue: email,
    })
  ).body.organizationIds as string[]

describe('an import racing a sign-up or a deletion of the same e-mail, across two instances', () => {
  it('an import and a sign-up by verification token at once: exactly one account holds the address', async () => {
    for (let round = 0; round < 3; round++) {
      const email = `signup-${round}@example.com`
      const key = testKey()
      const init = await proxy(a, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
      const outbox = await a.service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(email)}`)
      const [message] = ((await outbox.json()) as { messages: { code: string }[] }).messages
      const verify = await proxy(a, 'otp_verify', {
        otpId: init.body.otpId,
        otpCode: message!.code,
        public_key: key.publicKey,
      })
      const token = verify.body.verificationToken as string
      const before = await subOrganizations()
      const [imported, signedUp] = await Promise.all([
        a.submit('latchkey_import_user', { externalId: `signup-${round}`, email }),
        proxy(b, 'signup', {
          userEmail: email,
          verificationToken: token,
          clientSignature: bytesToHex(
            p256.sign(utf8ToBytes(token), key.privateKey, { prehash: true, format: 'compact' }),
          ),
          apiKeys: [],
          authenticators: [],
          oauthProviders: [],
        }),
      ])
      expect([imported.status, signedUp.status].sort()).toEqual([200, 409])
      if (imported.status === 409) expect(imported.body.details?.field).toBe('parameters.email')
      else expect(signedUp.body.message).toMatch(/log in/)
      expect(await subOrganizations()).toBe(before + 1)
      const holders = await accountsOf(email)
      expect(holders).toHaveLength(1)
      const claim = await a.service.store.get(
        'importClaims',
        accountClaimId(a.organizationId, 'email', email),
      )
      expect(claim?.subOrganizationId).toBe(holders[0])
    }
  })

  it("a deletion racing an import of the deleted account's e-mail: refused before, imported after, never two", async () => {
    for (let round = 0; round < 3; round++) {
      const email = `deleted-${round}@example.com`
      const key = testKey()
      const made = resultOf(
        'create_sub_organization',
        await a.submit('create_sub_organization', {
          subOrganizationName: 'to delete',
          rootUsers: [
            {
              userName: email,
              userEmail: email,
              apiKeys: [key.apiKey('root')],
              authenticators: [],
              oauthProviders: [],
            },
          ],
          rootQuorumThreshold: 1,
        }),
      )
      const [deleted, imported] = await Promise.all([
        b.submit('delete_sub_organization', {}, { as: key, organizationId: made.subOrganizationId }),
        a.submit('latchkey_import_user', { externalId: `deleted-${round}`, email }),
      ])
      expect(deleted.status).toBe(200)
      let result = imported
      if (imported.status !== 200) {
        // It ran before the deletion committed: refused, and the claim is free now.
        expect(imported.status).toBe(409)
        expect(imported.body.details?.field).toBe('parameters.email')
        a.clock.advance(1000)
        result = await a.submit('latchkey_import_user', { externalId: `deleted-${round}`, email })
      }
      const subOrganizationId = resultOf('latchkey_import_user', result).subOrganizationId
      expect(await accountsOf(email)).toEqual([subOrganizationId])
      const claim = await a.service.store.get(
        'importClaims',
        accountClaimId(a.organizationId, 'email', email),
      )
      expect(claim?.subOrganizationId).toBe(subOrganizationId)
    }
  })
})

describe('an imported Google identity and an OAuth sign-up of it, across two instances', () => {
  const GOOGLE = 'https://accounts.google.com'
  /** A token as instance `h`'s `oauth2_authenticate` issues it after Google's sign-in (`idp_iss` names Google). */
  const googleToken = (h: Harness, sub: string, key = testKey(), idpIssuer = GOOGLE) =>
    signInState(h.service.runtime).oidc.issue({
      sub,
      aud: 'client-web',
      nonce: oidcNonce(key.publicKey),
      provider: 'OAUTH2_PROVIDER_GOOGLE',
      idp_iss: idpIssuer,
      org: h.organizationId,
    }).token
  const holdersOf = async (subject: string) =>
    (await a.service.store.findBy('oauthProviders', 'subject', subject)).map((row) => row.organizationId)

  it('an import and a sign-up through the proxy at once, in either spelling of the issuer: one account holds it', async () => {
    for (let round = 0; round < 4; round++) {
      const subject = `google-race-${round}`
      const before = await subOrganizations()
      const [imported, signedUp] = await Promise.all([
        a.submit('latchkey_import_user', {
          externalId: `google-race-${round}`,
          oauthProviders: [{ issuer: round % 2 ? 'accounts.google.com' : GOOGLE, subject }],
        }),
        proxy(b, 'signup', {
          oauthProviders: [
            {
              providerName: 'google',
              oidcToken: googleToken(b, subject, testKey(), round % 2 ? GOOGLE : 'accounts.google.com'),
            },
          ],
        }),
      ])
      expect(
        [imported.status, signedUp.status].sort(),
        JSON.stringify([imported.body, signedUp.body]),
      ).toEqual([200, 409])
      if (imported.status === 409) expect(imported.body.details?.field).toBe('parameters.oauthProviders[0]')
      expect(await subOrganizations()).toBe(before + 1)
      const holders = await holdersOf(subject)
      expect(holders).toHaveLength(1)
      const claim = await a.service.store.get(
        'importClaims',
        accountClaimId(a.organizationId, 'oauth', `${GOOGLE}\n${subject}`),
      )
      expect(claim?.subOrganizationId).toBe(holders[0])
    }
  })

  it("imported on one instance, the person's OAuth login through the other lands in it; a link elsewhere is refused", async () => {
    const made = resultOf(
      'latchkey_import_user',
      await a.submit('latchkey_import_user', {
        externalId: 'google-first',
        oauthProviders: [{ issuer: 'accounts.google.com', subject: 'google-first' }],
      }),
    )
    const key = testKey()
    const login = await proxy(b, 'oauth_login', {
      oidcToken: googleToken(b, 'google-first', key),
      publicKey: key.publicKey,
    })
    expect(login.status, JSON.stringify(login.body)).toBe(200)
    expect(decodeJwtClaims<{ organization_id: string }>(login.body.session as string).organization_id).toBe(
      made.subOrganizationId,
    )
    const other = await b.createSubOrganization()
    const linked = await b.submit(
      'create_oauth_providers',
      {
        userId: other.userIds[0],
        oauthProviders: [{ providerName: 'google', oidcToken: googleToken(b, 'google-first') }],
      },
      { as: other.keys[0], organizationId: other.organizationId },
    )
    expect(linked.status).toBe(409)
    expect(linked.body.details?.field).toBe('parameters.oauthProviders[0].oidcToken')
    expect(await holdersOf('google-first')).toEqual([made.subOrganizationId])
  })

  it('the reverse: signed up through one instance, an import of that Google identity through the other is refused', async () => {
    const signedUp = await proxy(b, 'signup', {
      oauthProviders: [{ providerName: 'google', oidcToken: googleToken(b, 'google-second') }],
    })
    expect(signedUp.status, JSON.stringify(signedUp.body)).toBe(200)
    const imported = await a.submit('latchkey_import_user', {
      externalId: 'google-second',
      oauthProviders: [{ issuer: 'accounts.google.com', subject: 'google-second' }],
    })
    expect(imported.status).toBe(409)
    expect(imported.body.details?.field).toBe('parameters.oauthProviders[0]')
    expect(await holdersOf('google-second')).toEqual([signedUp.body.organizationId])
  })
})

describe('one passkey, one account, across two instances on PostgreSQL', () => {
  const copyOf = (of: { credentialId: string }) =>
    softPasskey({ credentialId: base64urlnopad.decode(of.credentialId) })
  const register = (
    h: Harness,
    account: { organizationId: string; userId: string; key: ReturnType<typeof testKey> },
    passkey: ReturnType<typeof softPasskey>,
    at: number,
  ) =>
    h.submit(
      'create_authenticators',
      { userId: account.userId, authenticators: [passkey.register()] },
      { as: account.key, organizationId: account.organizationId, timestampMs: String(at) },
    )
  const accounts = async (count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const key = testKey()
        const sub = await a.createSubOrganization({ keys: [key] })
        return { organizationId: sub.organizationId, userId: sub.userIds[0]!, key }
      }),
    )
  // The accounts holding it in storage: the lookup by credential id (list_suborgs) finds only those
  // a sign-in from the parent lands in, not a registration the passkey never signed in to.
  const holdersOf = async (credentialId: string) =>
    (await a.service.store.findBy('authenticators', 'credentialId', credentialId)).map(
      (row) => row.organizationId,
    )

  it('four accounts registering one credential id at once, two on each instance: exactly one holds it, the others 409 naming it', async () => {
    const racers = await accounts(4)
    for (let round = 0; round < 2; round++) {
      const original = softPasskey()
      const replies = await Promise.all(
        racers.map((account, i) =>
          register(i % 2 ? b : a, account, i === 0 ? original : copyOf(original), Date.now() + i),
        ),
      )
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409, 409, 409])
      for (const reply of replies.filter((r) => r.status === 409))
        expect(reply.body.details?.field).toBe('parameters.authenticators[0].attestation.credentialId')
      expect(await holdersOf(original.credentialId)).toHaveLength(1)
    }
  })

  it('an import of a passkey and a registration of its id elsewhere at once: exactly one account holds it', async () => {
    const [attacker] = await accounts(1)
    for (let round = 0; round < 3; round++) {
      const moved = softPasskey()
      const [imported, registered] = await Promise.all([
        a.submit('latchkey_import_user', {
          externalId: `passkey-${round}`,
          passkeys: [{ credentialId: moved.credentialId, cosePublicKey: moved.cosePublicKey }],
        }),
        register(b, attacker!, copyOf(moved), Date.now() + round),
      ])
      expect([imported.status, registered.status].sort()).toEqual([200, 409])
      expect(await holdersOf(moved.credentialId)).toHaveLength(1)
    }
  })
})
