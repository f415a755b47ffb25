import {
  type LinkEmailParameters,
  type LinkEmailReturnType,
  linkEmail,
  type StartLinkEmailParameters,
  type StartLinkEmailReturnType,
  startLinkEmail,
} from '../actions/activities/linkEmail.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `startLinkEmail` (it changes nothing a query shows). */
export function startLinkEmailMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'startLinkEmail'] as const,
    mutationFn: (variables: StartLinkEmailParameters): Promise<StartLinkEmailReturnType> =>
      startLinkEmail(client, variables),
    meta: { invalidates: [] } satisfies LatchkeyMutationMeta,
  }
}

/** Mutation options for `linkEmail`; `meta.invalidates` names the queries it makes stale. */
export function linkEmailMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'linkEmail'] as const,
    mutationFn: (variables: LinkEmailParameters): Promise<LinkEmailReturnType> =>
      linkEmail(client, variables),
    meta: { invalidates: ['linkedLogins', 'user', 'users'] } satisfies LatchkeyMutationMeta,
  }
}
