// Privy → Latchkey: Privy's user objects (`GET /api/v1/users` pages, `{ data: [...] }`, or its
// dashboard's JSON export) into import lines. Moves: the Privy DID as external id, e-mail, phone,
// Google and Apple subjects. Needs the user: embedded wallets (Privy holds the key shares; the
// person exports the key from Privy and imports it in the kit), and logins Latchkey does not verify
// as OIDC (Twitter, Discord, GitHub, …), reported on stderr.
import { fileURLToPath } from 'node:url'
import { type Converted, compact, e164, main, OIDC_ISSUERS } from './lines.ts'

interface PrivyLinkedAccount {
  type: string
  address?: string
  number?: string
  phoneNumber?: string
  subject?: string
  email?: string
  name?: string | null
  wallet_client_type?: string
  chain_type?: string
}

/** One Privy user object. */
export function fromPrivy(user: Record<string, unknown>): Converted {
  const id = user.id
  if (typeof id !== 'string' || id === '') throw new Error('a Privy user without an id')
  const accounts = (Array.isArray(user.linked_accounts) ? user.linked_accounts : []) as PrivyLinkedAccount[]
  const needsUser: string[] = []
  const email = accounts.find((a) => a.type === 'email')?.address
  const phone = accounts.find((a) => a.type === 'phone')
  const oauthProviders = accounts.flatMap((account) => {
    const provider = /^(\w+)_oauth$/.exec(account.type)?.[1]
    if (!provider || !account.subject) return []
    const issuer = OIDC_ISSUERS[provider]
    if (!issuer) {
      needsUser.push(
        `${provider} login: not an OIDC identity Latchkey verifies; the person signs in another way and links it`,
      )
      return []
    }
    return [{ issuer, subject: account.subject, providerName: provider }]
  })
  for (const account of accounts)
    if (account.type === 'wallet' && account.wallet_client_type === 'privy')
      needsUser.push(
        `embedded ${account.chain_type ?? ''} wallet ${account.address}: exported by the person from Privy, then imported in the kit (import_wallet)`.replace(
          '  ',
          ' ',
        ),
      )
  const phoneNumber = e164(phone?.number ?? phone?.phoneNumber)
  if (phone && !phoneNumber)
    needsUser.push(`phone ${phone.number ?? phone.phoneNumber}: not an E.164 number, left out`)
  return {
    line: compact({
      externalId: `privy:${id}`,
      ...(email ? { email } : {}),
      ...(phoneNumber ? { phoneNumber } : {}),
      oauthProviders,
    }),
    needsUser,
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(fromPrivy, ['data', 'users'])
