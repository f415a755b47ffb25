import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { mfaUserId } from '../activities/mfaUser.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetMfaFactorsParameters = Omit<
  QueryRequest<'latchkey_get_mfa_factors'>,
  'organizationId' | 'userId'
> & {
  /** @default the session's user */
  userId?: string | undefined
} & QueryActionOptions
export type GetMfaFactorsReturnType = QueryResponse<'latchkey_get_mfa_factors'>

/** A user's TOTP factors (never a secret) and how many unused recovery codes they hold. */
export async function getMfaFactors(
  client: Latchkey,
  parameters: GetMfaFactorsParameters = {} as GetMfaFactorsParameters,
): Promise<GetMfaFactorsReturnType> {
  const [body, options] = await queryBody(client, parameters)
  const userId = await mfaUserId(client, { userId: body.userId, sessionId: options.sessionId })
  return query(
    client,
    'latchkey_get_mfa_factors',
    { ...body, userId } as QueryRequest<'latchkey_get_mfa_factors'>,
    options,
  )
}
