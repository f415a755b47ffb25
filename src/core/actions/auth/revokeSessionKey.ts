import { query, submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

/** Deletes the API key with this public key from the user, acting as `sessionId`. */
export async function revokeSessionKey(
  client: Latchkey,
  parameters: { sessionId: string; userId: string; publicKey: string },
): Promise<boolean> {
  const options = { sessionId: parameters.sessionId }
  const state = client.store.getState().sessions[parameters.sessionId]
  const organizationId = state?.organizationId ?? client.config.organizationId
  const { apiKeys } = await query(
    client,
    'get_api_keys',
    { organizationId, userId: parameters.userId },
    options,
  )
  const apiKeyIds = apiKeys
    .filter((k) => k.credential.publicKey === parameters.publicKey)
    .map((k) => k.apiKeyId)
  if (apiKeyIds.length === 0) return false
  await submit(client, 'delete_api_keys', { userId: parameters.userId, apiKeyIds }, options)
  return true
}
