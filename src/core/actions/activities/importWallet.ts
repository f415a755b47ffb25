import type { AccountSpec, ImportBundleData } from '@latchkey/protocol'
import { hpkeSeal } from '../../bundles/hpkeSeal.ts'
import { trustedSignerOf, verifySignedBundle } from '../../bundles/verifySignedBundle.ts'
import { accountSpecsOf, type Chain, DEFAULT_CHAINS } from '../../chains.ts'
import { BundleMismatchError } from '../../errors.ts'
import { requireSession } from '../../session/sessions.ts'
import type { Latchkey } from '../../types.ts'
import { hexToBytes, utf8ToBytes } from '../../utils/encoding.ts'
import type { ActionOptions } from '../options.ts'
import { importWalletBundle } from './importWalletBundle.ts'
import { initImportWallet } from './initImportWallet.ts'

export type ImportWalletParameters = {
  /** BIP-39 mnemonic (12–24 words). */
  mnemonic: string
  walletName: string
  accounts?: AccountSpec[] | undefined
  /** @default ['ethereum', 'solana'] when `accounts` is absent */
  chains?: readonly Chain[] | undefined
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type ImportWalletReturnType = { walletId: string; addresses: string[] }

/**
 * Imports a mnemonic: `init_import_wallet` names the service's target key in a signed bundle,
 * verified here against `trustedSignerPublicKey` (organization and user checked, and no purpose
 * named: not the organization's import key), the mnemonic is HPKE-sealed to it and sent with
 * `import_wallet`. It never travels in clear.
 */
export async function importWallet(
  client: Latchkey,
  parameters: ImportWalletParameters,
): Promise<ImportWalletReturnType> {
  const { mnemonic, walletName, accounts, chains, userId: givenUserId, ...options } = parameters
  await client.hydrate()
  const session = requireSession(client, options.sessionId)
  const organizationId = options.organizationId ?? session.organizationId
  const userId = givenUserId ?? session.userId
  const trusted = trustedSignerOf(client)
  const { importBundle } = await initImportWallet(client, { userId, ...options, organizationId })
  const data = await verifySignedBundle<ImportBundleData>(importBundle, trusted)
  if (data.organizationId !== organizationId) throw new BundleMismatchError('organizationId')
  if (data.userId !== userId) throw new BundleMismatchError('userId')
  // A user's import target names no purpose; one that does (the organization's import key, whose
  // secrets `latchkey_import_user` opens into new accounts) is not where this user's secret goes.
  if (data.purpose !== undefined) throw new BundleMismatchError('purpose')
  const sealed = await hpkeSeal({
    plaintext: utf8ToBytes(mnemonic.trim().split(/\s+/).join(' ')),
    receiverPublicKey: hexToBytes(data.targetPublic),
  })
  return importWalletBundle(client, {
    userId,
    walletName,
    encryptedBundle: JSON.stringify(sealed),
    accounts: [...(accounts ?? []), ...accountSpecsOf(chains ?? (accounts ? [] : DEFAULT_CHAINS))],
    ...options,
    organizationId,
  })
}
