// An `X-Stamp-Attested` login naming the parent organization (what the published clients send when
// they do not know the account yet) finds the account through the index of the token's verified
// contact or OAuth identity, once the token verified: it never lists the parent's
// sub-organizations, nor their users. It once read every sub-organization of the parent before
// looking at the token (anyone: a fresh P-256 key signs the body, `publicKeyAttestation` is any
// string; 100,000 accounts made one request read 100,001 rows, 1.7 s), and with a verification
// token of the caller's own address (otp_init/otp_verify, no account needed, not spent by a
// refusal, so replayed at will) every user of every sub-organization too (20,000 accounts of 5
// users: 120,001 rows, 2 s a request). Every genuine OTP login naming the parent paid it as well.
import {
  ATTESTED_STAMP_HEADER,
  decodeJwtClaims,
  PROXY_CONFIG_HEADER,
  type SessionClaims,
} from '@latchkey/protocol'
import { expect, it, vi } from 'vitest'
import type { UserRow } from '../../src/kernel/store/model.ts'
import { createHarness, fillRows, type Harness, type Json, resultOf } from '../../src/testing/harness.ts'
import { type ClientKey, clientKey, googleAuthenticate } from '../support/publishedClient.ts'
import { countRowsRead } from './rowsRead.ts'

const APP = 'http://localhost:5173'
const TOKEN = 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN'
const OIDC = 'STAMP_ATTESTED_SCHEME_P256_OIDC'

const proxy = async (h: Harness, path: string, body: unknown) => {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: APP,
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

/** A verification token for `email` bound to `key` (the proxy's otp_init/otp_verify: no account needed). */
async function verified(h: Harness, email: string, key: ClientKey) {
  const init = await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  const outbox = await h.service.app.request(`/dev/outbox?contact=${encodeURIComponent(email)}`, {
    headers: { Accept: 'application/json' },
  })
  const code = ((await outbox.json()) as { messages: { code: string }[] }).messages[0]!.code
  const verify = await proxy(h, 'otp_verify', {
    otpId: init.body.otpId,
    otpCode: code,
    publicKey: key.publicKey,
  })
  expect(verify.status, JSON.stringify(verify.body)).toBe(200)
  return verify.body.verificationToken as string
}

/** An OIDC token of the dev IdP for `email`, its nonce bound to `key` (the proxy's oauth2_authenticate). */
async function googleToken(h: Harness, key: ClientKey, email: string) {
  const reply = await googleAuthenticate(h, (path, body) => proxy(h, path, body), APP, key.publicKey, email)
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body.oidcToken as string
}

/** A harness whose parent holds `accounts` sub-organizations of `usersEach` users (what sign-ups leave). */
async function parentWith(
  accounts: number,
  usersEach = 0,
  user: (i: number) => Partial<UserRow> = () => ({}),
) {
  const h = await createHarness()
  await fillRows(h, 'organizations', accounts, (i) => ({
    name: `account ${i}`,
    parentOrganizationId: h.organizationId,
    rootUserIds: [],
    rootQuorumThreshold: 1,
  }))
  await fillRows(
    h,
    'users',
    accounts * usersEach,
    (i) =>
      ({
        organizationId: `filler-organizations-${String(i % accounts).padStart(6, '0')}`,
        userName: `user ${i}`,
        ...user(i),
      }) as never,
  )
  return h
}

/** What `run` returns, the rows the store read while it ran (`countRowsRead`), and how long it took. */
async function reading<T>(run: () => Promise<T>) {
  const counter = countRowsRead()
  const started = performance.now()
  try {
    const result = await run()
    return { result, rows: await counter.rows(), ms: Math.round(performance.now() - started) }
  } finally {
    vi.restoreAllMocks()
  }
}

/** One `stamp_login` naming the parent (or `organizationId`), stamped by `key` with `token`, and what it read. */
async function loginNaming(
  h: Harness,
  key: ClientKey,
  token: string,
  { scheme = TOKEN, organizationId = h.organizationId }: { scheme?: string; organizationId?: string } = {},
) {
  h.clock.advance(1)
  const body = JSON.stringify({
    type: 'ACTIVITY_TYPE_STAMP_LOGIN',
    timestampMs: String(h.clock.now()),
    organizationId,
    parameters: { publicKey: key.publicKey, expirationSeconds: '900', invalidateExisting: false },
  })
  const read = await reading(() =>
    h.post('/public/v1/submit/stamp_login', body, {
      [ATTESTED_STAMP_HEADER]: key.attested(body, token, scheme),
      Origin: APP,
    }),
  )
  return {
    ...read,
    status: read.result.status,
    code: read.result.body?.details?.errorCode as string | undefined,
  }
}

async function refusedAnonymously(accounts: number, scheme: string) {
  const h = await parentWith(accounts)
  const login = await loginNaming(h, clientKey(), 'not-a-token', { scheme })
  await h.service.close()
  return login
}

for (const scheme of [TOKEN, OIDC])
  it(`an anonymous ${scheme} stamp naming the parent with no valid token reads the same rows with 100 or 5,000 accounts`, async () => {
    const few = await refusedAnonymously(100, scheme)
    const many = await refusedAnonymously(5000, scheme)
    expect(few.status).toBe(401)
    expect(many).toMatchObject({ status: 401, code: few.code })
    expect(many.rows, JSON.stringify({ few: few.rows, many: many.rows })).toBeLessThanOrEqual(few.rows + 5)
  }, 300_000)

async function replayedToken(accounts: number, usersEach: number, replays: number) {
  const h = await parentWith(accounts, usersEach)
  const key = clientKey()
  const token = await verified(h, 'nobody-signed-up@example.com', key)
  const logins = []
  for (let i = 0; i < replays; i++) logins.push(await loginNaming(h, key, token))
  await h.service.close()
  return logins
}

it("a login naming the parent with the caller's own verification token (no account) reads the same rows with 100 or 2,000 accounts of 5 users, every replay", async () => {
  const [few] = await replayedToken(100, 5, 1)
  const many = await replayedToken(2000, 5, 3)
  expect(few).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' })
  for (const replay of many) {
    expect(replay).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' })
    expect(replay.rows, JSON.stringify({ few: few!.rows, many: replay.rows })).toBeLessThanOrEqual(
      few!.rows + 5,
    )
  }
}, 300_000)

it('among 2,000 accounts, a login naming the parent lands in the account holding the e-mail verified, in a few reads; an unverified copy of the address elsewhere routes nothing', async () => {
  const email = 'ada@example.com'
  // Every filler account's first user holds the address unverified (anyone may set it in their own account).
  const h = await parentWith(2000, 2, (i) =>
    i < 2000 ? { userEmail: email, userEmailUnverified: true } : {},
  )
  const signUp = clientKey()
  const token = await verified(h, email, signUp)
  const signup = await proxy(h, 'signup', {
    userEmail: email,
    verificationToken: token,
    clientSignature: signUp.sign(token),
  })
  expect(signup.status, JSON.stringify(signup.body)).toBe(200)
  const organizationId = signup.body.organizationId as string
  const key = clientKey()
  const login = await loginNaming(h, key, await verified(h, email, key))
  expect(login.status, JSON.stringify(login.result.body)).toBe(200)
  expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login.result).session)).toMatchObject({
    public_key: key.publicKey,
    organization_id: organizationId,
  })
  expect(login.rows).toBeLessThan(100)
  // Naming a sub-organization that does not hold the address verified finds nothing there.
  const other = clientKey()
  const elsewhere = await loginNaming(h, other, await verified(h, email, other), {
    organizationId: 'filler-organizations-000000',
  })
  expect(elsewhere).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' })
  await h.service.close()
}, 300_000)

it('among 2,000 accounts, an OIDC login naming the parent lands in the account linked to the identity, in a few reads', async () => {
  const h = await parentWith(2000, 1)
  const signUp = clientKey()
  const email = 'grace@example.com'
  const created = await proxy(h, 'signup_v2', {
    oauthProviders: [{ providerName: 'google', oidcToken: await googleToken(h, signUp, email) }],
    apiKeys: [],
    authenticators: [],
  })
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  const key = clientKey()
  const login = await loginNaming(h, key, await googleToken(h, key, email), { scheme: OIDC })
  expect(login.status, JSON.stringify(login.result.body)).toBe(200)
  expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login.result).session)).toMatchObject({
    public_key: key.publicKey,
    organization_id: created.body.organizationId,
  })
  expect(login.rows).toBeLessThan(100)
  // Another identity of the same provider has no account under the parent.
  const stranger = clientKey()
  const refused = await loginNaming(h, stranger, await googleToken(h, stranger, 'nobody@example.com'), {
    scheme: OIDC,
  })
  expect(refused).toMatchObject({ status: 404, code: 'ACCOUNT_NOT_FOUND' })
  await h.service.close()
}, 300_000)

it.skipIf(!process.env.AUDIT_AMPLIFY_TIMING)(
  'timing: 100,000 accounts, and 20,000 of 5 users with a token (AUDIT_AMPLIFY_TIMING=1)',
  async () => {
    const refused = await refusedAnonymously(100_000, TOKEN)
    console.log({ status: refused.status, rows: refused.rows, ms: refused.ms })
    const replays = await replayedToken(20_000, 5, 2)
    console.log(replays.map(({ status, rows, ms }) => ({ status, rows, ms })))
  },
  600_000,
)
