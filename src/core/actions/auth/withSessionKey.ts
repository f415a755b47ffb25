import type { StoredKey } from '../../keyStore/createKeyStore.ts'
import type { Latchkey } from '../../types.ts'

/**
 * Runs a sign-in with a fresh non-extractable key; the key is deleted again when the sign-in
 * fails, so abandoned attempts leave nothing behind.
 */
export async function withSessionKey<T>(client: Latchkey, run: (key: StoredKey) => Promise<T>): Promise<T> {
  await client.hydrate()
  const key = await client.keyStore.create({ scope: client.config.organizationId })
  try {
    return await run(key)
  } catch (error) {
    await client.keyStore.delete(key.publicKey).catch(() => undefined)
    throw error
  }
}
