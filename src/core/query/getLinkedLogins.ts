import {
  type GetLinkedLoginsParameters,
  type GetLinkedLoginsReturnType,
  getLinkedLogins,
} from '../actions/queries/getLinkedLogins.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetLinkedLoginsQueryParameters = GetLinkedLoginsParameters

export const getLinkedLoginsQueryKey = (
  parameters: Omit<GetLinkedLoginsQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('linkedLogins', parameters)
export type GetLinkedLoginsQueryKey = ReturnType<typeof getLinkedLoginsQueryKey>

/** Query options for `getLinkedLogins`; disabled until a session exists. */
export function getLinkedLoginsQueryOptions(
  client: Latchkey,
  parameters: GetLinkedLoginsQueryParameters = {},
) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getLinkedLoginsQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetLinkedLoginsReturnType> =>
      getLinkedLogins(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled,
  }
}
