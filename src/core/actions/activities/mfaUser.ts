import { requireSession } from '../../session/sessions.ts'
import type { Latchkey } from '../../types.ts'

/** The user an MFA action is about: the one given, else the session's own (users manage their own factors). */
export async function mfaUserId(
  client: Latchkey,
  { userId, sessionId }: { userId?: string | undefined; sessionId?: string | undefined },
): Promise<string> {
  if (userId) return userId
  await client.hydrate()
  return requireSession(client, sessionId).userId
}
