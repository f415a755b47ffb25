// Dynamic → Latchkey: Dynamic's users (its API's `GET /environments/{id}/users`, `{ users: [...] }`,
// or JSON lines) into import lines. Moves: the Dynamic user id as external id, the verified
// credentials of format `email`, `phoneNumber` and `oauth` (Google, Apple). Needs the user: embedded
// wallets (`blockchain` credentials of Dynamic's embedded wallet: the person exports the key from
// Dynamic and imports it), and other OAuth providers, reported on stderr.
import { fileURLToPath } from 'node:url'
import { type Converted, compact, e164, main, OIDC_ISSUERS } from './lines.ts'

interface DynamicCredential {
  format: string
  email?: string
  phoneNumber?: string
  phoneCountryCode?: string
  oauthProvider?: string
  oauthAccountId?: string
  address?: string
  chain?: string
  walletName?: string
  walletProvider?: string
}

/** One Dynamic user. */
export function fromDynamic(user: Record<string, unknown>): Converted {
  const id = user.id
  if (typeof id !== 'string' || id === '') throw new Error('a Dynamic user without an id')
  const credentials = (
    Array.isArray(user.verifiedCredentials) ? user.verifiedCredentials : []
  ) as DynamicCredential[]
  const needsUser: string[] = []
  const email = credentials.find((c) => c.format === 'email')?.email
  const phone = credentials.find((c) => c.format === 'phoneNumber')
  const phoneNumber = phone ? e164(phone.phoneNumber, phone.phoneCountryCode) : undefined
  if (phone && !phoneNumber) needsUser.push(`phone ${phone.phoneNumber}: not an E.164 number, left out`)
  const oauthProviders = credentials.flatMap((credential) => {
    if (credential.format !== 'oauth' || !credential.oauthProvider || !credential.oauthAccountId) return []
    const issuer = OIDC_ISSUERS[credential.oauthProvider]
    if (!issuer) {
      needsUser.push(
        `${credential.oauthProvider} login: not an OIDC identity Latchkey verifies; the person links it after signing in`,
      )
      return []
    }
    return [{ issuer, subject: credential.oauthAccountId, providerName: credential.oauthProvider }]
  })
  for (const credential of credentials)
    if (credential.format === 'blockchain' && credential.walletProvider === 'embeddedWallet')
      needsUser.push(
        `embedded wallet ${credential.address}: exported by the person from Dynamic, then imported in the kit (import_wallet)`,
      )
  return {
    line: compact({
      externalId: `dynamic:${id}`,
      ...(typeof user.username === 'string' ? { userName: user.username } : {}),
      ...(email ? { email } : {}),
      ...(phoneNumber ? { phoneNumber } : {}),
      oauthProviders,
    }),
    needsUser,
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(fromDynamic, ['users', 'data'])
