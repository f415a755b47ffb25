// Turnkey → Latchkey: the sub-organizations of a Turnkey parent, as its published API answers
// `get_organization` for each (`{ organizationData: { organizationId, users, wallets } }`, one a
// line, or an array), into import lines: one per sub-organization's root user. Moves: the
// sub-organization id as external id, e-mail, phone, OAuth identities (issuer + subject) and
// passkeys (credential id and public key: they keep working on the same relying party id). Needs
// the user: wallets (an export is encrypted to a key the person holds: `export_wallet` there,
// `import_wallet` in the kit), reported on stderr.

import { fileURLToPath } from 'node:url'
import { p256 } from '@noble/curves/nist.js'
import { type Converted, compact, main } from './lines.ts'

interface TurnkeyUser {
  userId: string
  userName?: string
  userEmail?: string
  userPhoneNumber?: string
  authenticators?: { credentialId: string; authenticatorName?: string; credential: { publicKey: string } }[]
  oauthProviders?: { issuer: string; subject: string; audience?: string; providerName?: string }[]
}

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')

/**
 * A passkey's COSE key (base64url) from Turnkey's `credential.publicKey`: a compressed P-256 point
 * in hex (ES256, what passkeys use), or a COSE key in hex already.
 */
export function coseKeyOf(publicKeyHex: string): string {
  const bytes = Uint8Array.from(Buffer.from(publicKeyHex, 'hex'))
  if (bytes[0] !== 0x02 && bytes[0] !== 0x03 && bytes[0] !== 0x04) return base64url(bytes)
  const point = p256.Point.fromBytes(bytes).toBytes(false)
  // CBOR map {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}.
  return base64url(
    Uint8Array.from([
      0xa5,
      0x01,
      0x02,
      0x03,
      0x26,
      0x20,
      0x01,
      0x21,
      0x58,
      0x20,
      ...point.subarray(1, 33),
      0x22,
      0x58,
      0x20,
      ...point.subarray(33),
    ]),
  )
}

/** One sub-organization as `get_organization` answers it. */
export function fromTurnkey(record: Record<string, unknown>): Converted {
  const data = (record.organizationData ?? record) as {
    organizationId?: string
    users?: TurnkeyUser[]
    wallets?: { walletId: string; walletName?: string }[]
  }
  if (typeof data.organizationId !== 'string')
    throw new Error('a Turnkey organization without organizationId')
  const [user, ...others] = data.users ?? []
  const needsUser = [
    ...(data.wallets ?? []).map(
      (w) =>
        `wallet ${w.walletName ?? w.walletId}: exported by the person (export_wallet, encrypted to their key), then imported in the kit`,
    ),
    ...others.map(
      (u) => `user ${u.userName ?? u.userId}: only the first user of a sub-organization is carried`,
    ),
  ]
  if (!user) return { line: { externalId: `turnkey:${data.organizationId}` }, needsUser }
  return {
    line: compact({
      externalId: `turnkey:${data.organizationId}`,
      ...(user.userName ? { userName: user.userName } : {}),
      ...(user.userEmail ? { email: user.userEmail } : {}),
      ...(user.userPhoneNumber ? { phoneNumber: user.userPhoneNumber } : {}),
      oauthProviders: (user.oauthProviders ?? []).map((o) => ({
        issuer: o.issuer,
        subject: o.subject,
        ...(o.audience ? { audience: o.audience } : {}),
        ...(o.providerName ? { providerName: o.providerName } : {}),
      })),
      passkeys: (user.authenticators ?? []).map((a) => ({
        credentialId: a.credentialId.replace(/=+$/, ''),
        cosePublicKey: coseKeyOf(a.credential.publicKey),
        ...(a.authenticatorName ? { name: a.authenticatorName } : {}),
      })),
    }),
    needsUser,
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(fromTurnkey, ['organizations', 'data'])
