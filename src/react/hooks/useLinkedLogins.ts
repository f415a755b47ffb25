import type { UseQueryResult } from '@tanstack/react-query'
import type { GetLinkedLoginsReturnType } from '../../core/actions/queries/getLinkedLogins.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetLinkedLoginsQueryParameters,
  getLinkedLoginsQueryOptions,
} from '../../core/query/getLinkedLogins.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseLinkedLoginsParameters = GetLinkedLoginsQueryParameters &
  ClientParameter &
  QueryParameter<GetLinkedLoginsReturnType>
export type UseLinkedLoginsReturnType = UseQueryResult<GetLinkedLoginsReturnType, LatchkeyError>

/**
 * Every durable way into the user's account (the session's user by default): e-mail, phone, OAuth
 * identities, passkeys, wallets and API keys (`getLinkedLogins`).
 */
export function useLinkedLogins(parameters: UseLinkedLoginsParameters = {}): UseLinkedLoginsReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getLinkedLoginsQueryOptions(client, rest), query, rest.sessionId)
}
