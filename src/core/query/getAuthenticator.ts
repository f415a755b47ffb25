import {
  type GetAuthenticatorParameters,
  type GetAuthenticatorReturnType,
  getAuthenticator,
} from '../actions/queries/getAuthenticator.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetAuthenticatorQueryParameters = Partial<GetAuthenticatorParameters>

export const getAuthenticatorQueryKey = (
  parameters: Omit<GetAuthenticatorQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('authenticator', parameters)
export type GetAuthenticatorQueryKey = ReturnType<typeof getAuthenticatorQueryKey>

/** Query options for `getAuthenticator`; disabled until a session and authenticatorId exist. */
export function getAuthenticatorQueryOptions(client: Latchkey, parameters: GetAuthenticatorQueryParameters) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getAuthenticatorQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetAuthenticatorReturnType> =>
      getAuthenticator(client, {
        ...parameters,
        sessionId: scope.sessionId ?? undefined,
        signal,
      } as GetAuthenticatorParameters),
    enabled: enabled && parameters.authenticatorId !== undefined,
  }
}
