import { decryptExportBundle, generateExportTarget } from '../../bundles/decryptExportBundle.ts'
import { thenOrResume } from '../../errors.ts'
import { requireSession } from '../../session/sessions.ts'
import type { Latchkey } from '../../types.ts'
import { bytesToHex } from '../../utils/encoding.ts'
import type { ActionOptions } from '../options.ts'
import { exportWalletAccountBundle } from './exportWalletAccountBundle.ts'

export type ExportWalletAccountParameters = { address: string } & ActionOptions
export type ExportWalletAccountReturnType = {
  address: string
  /** The account's raw 32-byte private key, hex. */
  privateKey: string
}

/** Exports one account's private key (headless; see `exportWallet`). */
export async function exportWalletAccount(
  client: Latchkey,
  parameters: ExportWalletAccountParameters,
): Promise<ExportWalletAccountReturnType> {
  const { address, ...options } = parameters
  await client.hydrate()
  const organizationId = options.organizationId ?? requireSession(client, options.sessionId).organizationId
  const target = await generateExportTarget()
  return thenOrResume(
    exportWalletAccountBundle(client, {
      address,
      targetPublicKey: target.publicKeyHex,
      ...options,
      organizationId,
    }),
    async ({ exportBundle }) => {
      const plaintext = await decryptExportBundle(client, { exportBundle, target, organizationId })
      // The plaintext is the raw key; accept its hex text too.
      const text = plaintext.length === 64 ? new TextDecoder().decode(plaintext) : ''
      return {
        address,
        privateKey: /^[0-9a-f]{64}$/i.test(text) ? text.toLowerCase() : bytesToHex(plaintext),
      }
    },
  )
}
