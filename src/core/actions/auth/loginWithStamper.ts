import { LatchkeyError } from '../../errors.ts'
import type { StoredKey } from '../../keyStore/createKeyStore.ts'
import type { Stamper } from '../../stampers/types.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { sessionLifetimeSeconds } from './loadWalletKitConfig.ts'

/**
 * `stamp_login` for `key`, stamped by a passkey or wallet. It names `organizationId` (by default
 * the parent organization: the service finds the user's sub-organization from the credential).
 * A service that insists on the sub-organization refuses with PERMISSION_DENIED; then, once,
 * the request is re-stamped in the organization `resolveOrganization` finds for the credential
 * that just signed (a second prompt, only in that case).
 */
export async function loginWithStamper(
  client: Latchkey,
  parameters: {
    key: StoredKey
    stamper: Stamper
    organizationId?: string | undefined
    resolveOrganization: () => Promise<string | null | undefined>
    signal?: AbortSignal | undefined
  },
): Promise<string> {
  const request = async (organizationId: string) =>
    (
      await submit(
        client,
        'stamp_login',
        {
          publicKey: parameters.key.publicKey,
          expirationSeconds: String(await sessionLifetimeSeconds(client)),
        },
        { organizationId, stamper: parameters.stamper, signal: parameters.signal },
      )
    ).result.session
  const first = parameters.organizationId ?? client.config.organizationId
  try {
    return await request(first)
  } catch (error) {
    if (!(error instanceof LatchkeyError) || error.code !== 'PERMISSION_DENIED') throw error
    const resolved = await parameters.resolveOrganization()
    if (!resolved || resolved === first) throw error
    return request(resolved)
  }
}
