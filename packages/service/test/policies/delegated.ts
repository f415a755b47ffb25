// Shared set-up of the policy tests: a sub-organization whose only root user is the end user, a
// non-root back end, and a helper to add policies (delegated access, docs/policies.md).
import { base32nopad } from '@scure/base'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { totp } from '../../src/mfa/totp.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  type Json,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import type { Chain } from '../sending/sendSupport.ts'

export async function delegated(accounts: Json[], h?: Harness) {
  h ??= await createHarness()
  const root = testKey()
  const sub = await h.createSubOrganization({ keys: [root], wallet: { walletName: 'Main', accounts } })
  const at = { organizationId: sub.organizationId }
  const asRoot = { ...at, as: root }
  const backend: TestKey = testKey()
  const { userIds } = resultOf(
    'create_users',
    await h.submit(
      'create_users',
      {
        users: [
          {
            userName: 'backend',
            apiKeys: [backend.apiKey('backend')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      },
      asRoot,
    ),
  )
  const backendUserId = userIds[0] as string
  const policy = async (params: Json) =>
    resultOf('create_policy', await h!.submit('create_policy', { notes: '', ...params }, asRoot))
      .policyId as string
  return {
    h,
    sub,
    at,
    asRoot,
    asBackend: { ...at, as: backend },
    backendUserId,
    policy,
    /** The broad grant a delegated back end gets: sign anything with the organization's keys. */
    allowSigning: () =>
      policy({
        policyName: 'back end signs',
        effect: 'EFFECT_ALLOW',
        condition: "activity.resource == 'WALLET' && activity.action == 'SIGN'",
        consensus: `approvers.any(user, user.id == '${backendUserId}')`,
      }),
  }
}

/**
 * A service sending on `chain` (anvil: `test/sending/sendSupport.ts`), its sponsor funded, and a
 * back end delegated by an end user whose Ethereum wallet holds `funds` wei: the set-up of the
 * policy tests on `eth_send_transaction`. `options` add to the service's (a `sending` poll, a
 * counting `fetch`).
 */
export async function delegatedSender(
  chain: Pick<Chain, 'url' | 'delegate' | 'fund'>,
  { funds = 10n ** 18n, ...options }: CreateServiceOptions & { funds?: bigint } = {},
) {
  const caip2 = 'eip155:31337'
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    rpc: { [caip2]: chain.url },
    sponsorship: { delegates: { [caip2]: chain.delegate } },
    ...options,
  })
  const sponsor = sponsorAddress(h.service.runtime)
  if (sponsor) await chain.fund(sponsor, 10n ** 19n)
  const t = await delegated([ETHEREUM_ACCOUNT], h)
  const from = t.sub.addresses![0]!
  await chain.fund(from, funds)
  return { h, t, from }
}

/** Who submits a request and where (`Harness.submit`'s options). */
type SubmitAs = NonNullable<Parameters<Harness['submit']>[2]>

/**
 * A session key that `as` signs in (`stamp_login`) under a new session profile of `scope`, which
 * `owner` (a root of the organization) makes.
 */
export async function profiledSession(
  h: Harness,
  {
    owner,
    as,
    scope,
    name = `profile ${h.clock.now()}`,
  }: { owner: SubmitAs; as: SubmitAs; scope: string; name?: string },
): Promise<TestKey> {
  h.clock.advance(1)
  const sessionProfileId = resultOf(
    'create_session_profile',
    await h.submit('create_session_profile', { sessionProfileName: name, scope }, owner),
  ).sessionProfileId as string
  const session = testKey()
  h.clock.advance(1)
  resultOf(
    'stamp_login',
    await h.submit('stamp_login', { publicKey: session.publicKey, sessionProfileId }, as),
  )
  return session
}

/**
 * `delegatedSender` whose JSON-RPC calls to the node are counted: `nodeCalls` holds the method of
 * each request, in order (the tests of what a refused send costs the operator's node). Its sends
 * are polled once a minute unless `options` say otherwise.
 */
export async function countedSender(
  chain: Pick<Chain, 'url' | 'delegate' | 'fund'>,
  options: CreateServiceOptions & { funds?: bigint } = {},
) {
  const nodeCalls: string[] = []
  const counting: typeof fetch = async (input, init) => {
    try {
      nodeCalls.push((JSON.parse(String(init?.body)) as { method: string }).method)
    } catch {}
    return fetch(input, init)
  }
  const sender = await delegatedSender(chain, {
    sending: { pollIntervalMs: 60_000 },
    ...options,
    fetch: counting,
  } as never)
  return { ...sender, nodeCalls }
}

/**
 * The back end's own second factor (an authenticator app), enrolled and confirmed, and MFA policies
 * the end user puts on it, each with that factor as its one step: `code()` is a fresh code.
 */
export async function backEndSecondFactor(
  h: Harness,
  t: Awaited<ReturnType<typeof delegated>>,
  policies: { name: string; condition: string }[],
) {
  const asBackend = (path: Parameters<typeof h.submit>[0], params: unknown) => {
    h.clock.advance(1)
    return h.submit(path, params, t.asBackend)
  }
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await asBackend('latchkey_create_totp_factor', { userId: t.backendUserId }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  const code = () => totp(secret, h.clock.now())
  resultOf(
    'latchkey_confirm_totp_factor',
    await asBackend('latchkey_confirm_totp_factor', {
      userId: t.backendUserId,
      factorId: enrolled.factorId,
      code: code(),
    }),
  )
  for (const [order, { name, condition }] of policies.entries()) {
    h.clock.advance(1)
    resultOf(
      'create_mfa_policy',
      await h.submit(
        'create_mfa_policy',
        {
          userId: t.backendUserId,
          mfaPolicyName: name,
          condition,
          requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
          order,
        },
        t.asRoot,
      ),
    )
  }
  return { asBackend, code }
}
