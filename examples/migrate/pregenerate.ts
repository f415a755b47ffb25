/**
 * Pregenerated wallets, the server recipe: your back end, holding the parent organization's root
 * API key, creates a person's sub-organization and wallet from their e-mail address before they
 * ever sign in. The parent's root vouches for the address, so the person's first e-mail OTP
 * sign-in (any app on `latchkey`, nothing to change) lands in that sub-organization and sees that
 * wallet. A second pregeneration of the same address, in any sub-organization, is refused with
 * 409 naming `parameters.rootUsers[0].userEmail` (docs/migrate.md).
 *
 *   LATCHKEY_SERVICE_JSON="$(head -1 /tmp/latchkey.json)" npx tsx examples/migrate/pregenerate.ts ada@example.com
 */
import { fileURLToPath } from 'node:url'
import { createSubOrganization, getWhoami, type Latchkey } from 'latchkey/core'
import { backendClient } from '../delegated-access.ts'

export interface OperatorOptions {
  baseUrl: string
  authProxyConfigId: string
  /** The parent (top-level) organization. */
  organizationId: string
  /** Its root user's P-256 API private key, hex: keep it in your back end's secrets. */
  apiPrivateKeyHex: string
}

/** A `latchkey/core` client stamped with the parent organization's root API key. */
export async function operatorClient(options: OperatorOptions): Promise<Latchkey> {
  const client = (userId: string) =>
    backendClient({
      baseUrl: options.baseUrl,
      authProxyConfigId: options.authProxyConfigId,
      organizationId: options.organizationId,
      userId,
      privateKeyHex: options.apiPrivateKeyHex,
    })
  // The service knows the key's user; the client's session wants its id.
  const probe = await client('')
  try {
    return await client((await getWhoami(probe, {})).userId)
  } finally {
    probe.destroy()
  }
}

export const ETHEREUM_ACCOUNT = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
} as const

/** One person's account and Ethereum wallet, by e-mail, before they exist. */
export async function pregenerateByEmail(
  operator: Latchkey,
  { email, walletName = 'Main' }: { email: string; walletName?: string },
): Promise<{ subOrganizationId: string; walletId: string; address: string }> {
  const result = await createSubOrganization(operator, {
    subOrganizationName: email,
    rootUsers: [{ userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
    rootQuorumThreshold: 1,
    wallet: { walletName, accounts: [ETHEREUM_ACCOUNT] },
  })
  return {
    subOrganizationId: result.subOrganizationId,
    walletId: result.wallet!.walletId,
    address: result.wallet!.addresses[0]!,
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const service = JSON.parse(process.env.LATCHKEY_SERVICE_JSON ?? '{}') as Record<string, string>
  const operator = await operatorClient({
    baseUrl: service.baseUrl!,
    authProxyConfigId: service.authProxyConfigId!,
    organizationId: service.organizationId!,
    apiPrivateKeyHex: service.apiPrivateKey!,
  })
  console.log(await pregenerateByEmail(operator, { email: process.argv[2] ?? 'ada@example.com' }))
  operator.destroy()
}
