import { requireSession } from '../../session/sessions.ts'
import type { RequestOptions } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export interface QueryActionOptions {
  /** @default the session's organization */
  organizationId?: string | undefined
  /** Read as this session (e.g. a read-only one) instead of the active one. */
  sessionId?: string | undefined
  signal?: AbortSignal | undefined
}

/** Query body with `organizationId` defaulted to the session's, and the request options. */
export async function queryBody<T extends QueryActionOptions>(
  client: Latchkey,
  parameters: T,
): Promise<[Omit<T, keyof QueryActionOptions> & { organizationId: string }, RequestOptions]> {
  await client.hydrate()
  const { sessionId, signal, organizationId, ...rest } = parameters
  const session = requireSession(client, sessionId)
  return [
    { ...rest, organizationId: organizationId ?? session.organizationId },
    { sessionId, signal },
  ]
}
