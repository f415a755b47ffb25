import type { LinkOAuthParameters, LinkOAuthReturnType } from '../actions/activities/linkOAuth.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `linkOAuth`; `meta.invalidates` names the queries it makes stale. */
export function linkOAuthMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'linkOAuth'] as const,
    async mutationFn(variables: LinkOAuthParameters): Promise<LinkOAuthReturnType> {
      // Loaded on first use: the OAuth flow stays out of every start-up bundle.
      const { linkOAuth } = await import('../actions/activities/linkOAuth.ts')
      return linkOAuth(client, variables)
    },
    meta: { invalidates: ['linkedLogins', 'user', 'users'] } satisfies LatchkeyMutationMeta,
  }
}
