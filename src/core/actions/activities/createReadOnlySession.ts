import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateReadOnlySessionParameters = {
  /** Make it the active session (activities then fail with READ_ONLY_SESSION). @default false */
  activate?: boolean | undefined
} & ActionOptions
export type CreateReadOnlySessionReturnType = { session: Session; organizationName: string; username: string }

/**
 * `create_read_only_session`: a one-hour session that can only read. Its JWT is kept in memory
 * only and sent as `X-Session` by queries given its `sessionId`.
 */
export async function createReadOnlySession(
  client: Latchkey,
  parameters: CreateReadOnlySessionParameters = {},
): Promise<CreateReadOnlySessionReturnType> {
  const [{ activate }, options] = splitOptions(parameters)
  const { result } = await submit(client, 'create_read_only_session', {}, options)
  const session = addSessionFromJwt(client, {
    session: result.session,
    method: 'read-only',
    activate: activate ?? false,
  })
  return { session, organizationName: result.organizationName, username: result.username }
}
