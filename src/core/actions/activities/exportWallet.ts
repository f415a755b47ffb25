import { decryptExportBundle, generateExportTarget } from '../../bundles/decryptExportBundle.ts'
import { thenOrResume } from '../../errors.ts'
import { requireSession } from '../../session/sessions.ts'
import type { Latchkey } from '../../types.ts'
import type { ActionOptions } from '../options.ts'
import { exportWalletBundle } from './exportWalletBundle.ts'

export type ExportWalletParameters = { walletId: string } & ActionOptions
export type ExportWalletReturnType = { walletId: string; mnemonic: string }

/**
 * Exports a wallet's mnemonic for headless use: encrypted by the service to a fresh
 * non-extractable key, verified against `trustedSignerPublicKey`, decrypted here. (The drop-in
 * components show secrets inside the service's iframe instead.)
 */
export async function exportWallet(
  client: Latchkey,
  parameters: ExportWalletParameters,
): Promise<ExportWalletReturnType> {
  const { walletId, ...options } = parameters
  await client.hydrate()
  const organizationId = options.organizationId ?? requireSession(client, options.sessionId).organizationId
  const target = await generateExportTarget()
  return thenOrResume(
    exportWalletBundle(client, {
      walletId,
      targetPublicKey: target.publicKeyHex,
      ...options,
      organizationId,
    }),
    async ({ exportBundle }) => {
      const plaintext = await decryptExportBundle(client, { exportBundle, target, organizationId })
      return { walletId, mnemonic: new TextDecoder().decode(plaintext) }
    },
  )
}
