// Shared set-up of the policy tests: a sub-organization whose only root user is the end user, a
// non-root back end, and a helper to add policies (delegated access, docs/policies.md).
import {
  createHarness,
  type Harness,
  type Json,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'

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
