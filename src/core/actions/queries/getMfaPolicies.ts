import type { QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { mfaUserId } from '../activities/mfaUser.ts'
import { type QueryActionOptions, queryBody } from './queryBody.ts'

export type GetMfaPoliciesParameters = Omit<QueryRequest<'get_mfa_policies'>, 'organizationId' | 'userId'> & {
  /** @default the session's user */
  userId?: string | undefined
} & QueryActionOptions
export type GetMfaPoliciesReturnType = QueryResponse<'get_mfa_policies'>

/** The MFA policies on a user (`get_mfa_policies`), lowest `order` first. */
export async function getMfaPolicies(
  client: Latchkey,
  parameters: GetMfaPoliciesParameters = {} as GetMfaPoliciesParameters,
): Promise<GetMfaPoliciesReturnType> {
  const [body, options] = await queryBody(client, parameters)
  const userId = await mfaUserId(client, { userId: body.userId, sessionId: options.sessionId })
  return query(client, 'get_mfa_policies', { ...body, userId } as QueryRequest<'get_mfa_policies'>, options)
}
