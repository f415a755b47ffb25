// Shared set-up of the policy tests: a sub-organization whose only root user is the end user, a
// non-root back end, and a helper to add policies (delegated access, docs/policies.md).
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
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
