import type { ImportUserParams } from '@latchkey/protocol'
import type { Store } from '../kernel/store/Store.ts'

/** One exported user: the import format without secrets (wallets and keys are the person's to export). */
export type ExportedUser = Omit<ImportUserParams, 'wallets' | 'privateKeys'>

/**
 * The users of `organizationId`'s sub-organizations, one a call to `write`, in the JSONL format of
 * `latchkey-service import` with no secret: contacts, OAuth identities, passkeys (public keys) and
 * the addresses of their wallets and keys. An imported user keeps its external id; any other is
 * exported under its sub-organization's id. Walks the organizations a page at a time.
 */
export async function exportUsers(
  store: Store,
  organizationId: string,
  write: (user: ExportedUser) => Promise<void> | void,
): Promise<number> {
  const externalIds = new Map<string, string>()
  for (const row of await store.findBy('importedUsers', 'organizationId', organizationId))
    externalIds.set(row.subOrganizationId, row.externalId)
  let count = 0
  let afterId = ''
  for (;;) {
    const page = await store.page('organizations', { afterId, limit: 200 })
    if (page.length === 0) return count
    afterId = page.at(-1)!.id
    for (const org of page) {
      if (org.parentOrganizationId !== organizationId) continue
      const users = (await store.findBy('users', 'organizationId', org.id)).filter((user) =>
        org.rootUserIds.includes(user.id),
      )
      const oauth = await store.findBy('oauthProviders', 'organizationId', org.id)
      const passkeys = await store.findBy('authenticators', 'organizationId', org.id)
      const addresses = [
        ...(await store.findBy('walletAccounts', 'organizationId', org.id)).map((account) => account.address),
        ...(await store.findBy('privateKeys', 'organizationId', org.id)).flatMap((key) =>
          key.addresses.map((entry) => entry.address),
        ),
      ]
      for (const [index, user] of users.entries()) {
        const base = externalIds.get(org.id) ?? org.id
        const mine = <T extends { userId: string }>(rows: T[]) => rows.filter((row) => row.userId === user.id)
        await write({
          externalId: users.length > 1 ? `${base}#${index}` : base,
          userName: user.userName,
          ...(user.userEmail && !user.userEmailUnverified ? { email: user.userEmail } : {}),
          ...(user.userPhoneNumber && !user.userPhoneNumberUnverified
            ? { phoneNumber: user.userPhoneNumber }
            : {}),
          ...(mine(oauth).length > 0
            ? {
                oauthProviders: mine(oauth).map((row) => ({
                  issuer: row.issuer,
                  subject: row.subject,
                  ...(row.audience ? { audience: row.audience } : {}),
                  providerName: row.providerName,
                })),
              }
            : {}),
          ...(mine(passkeys).length > 0
            ? {
                passkeys: mine(passkeys).map((row) => ({
                  credentialId: row.credentialId,
                  cosePublicKey: row.cosePublicKey,
                  name: row.name,
                  counter: row.counter,
                })),
              }
            : {}),
          ...(index === 0 && addresses.length > 0 ? { addresses } : {}),
        })
        count++
      }
    }
  }
}
