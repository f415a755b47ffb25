import {
  type CreateSubOrganizationParameters,
  type CreateSubOrganizationReturnType,
  createSubOrganization,
} from '../actions/activities/createSubOrganization.ts'
import type { Latchkey } from '../types.ts'
import { type LatchkeyMutationMeta, QUERY_SCOPE } from './utils.ts'

/** Mutation options for `createSubOrganization`; `meta.invalidates` names the queries it makes stale. */
export function createSubOrganizationMutationOptions(client: Latchkey) {
  return {
    mutationKey: [QUERY_SCOPE, 'createSubOrganization'] as const,
    mutationFn: (variables: CreateSubOrganizationParameters): Promise<CreateSubOrganizationReturnType> =>
      createSubOrganization(client, variables),
    meta: { invalidates: ['subOrganizations'] } satisfies LatchkeyMutationMeta,
  }
}
