import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { addr } from 'micro-eth-signer'
import type { Runtime } from '../Runtime.ts'
import type { OrganizationRow, SponsorRow } from '../store/model.ts'
import type { SponsorshipOptions } from './SendingOptions.ts'

/** The id of a sponsor row: its owner (`default` or an organization id) and chain family. */
export const sponsorIdOf = (owner: string, family: 'eip155' = 'eip155') => `${owner}|${family}`

/**
 * Seals the key of every configured EVM sponsor that has no row yet: the one given, or a fresh
 * one. Idempotent, and safe with several instances starting at once (the row's id is its owner).
 */
export async function ensureSponsors(runtime: Runtime, options: SponsorshipOptions): Promise<void> {
  const sponsors = options.sponsors ?? { default: {} }
  const loaded = new Map<string, SponsorRow>()
  for (const [owner, sponsor] of Object.entries(sponsors)) {
    const id = sponsorIdOf(owner)
    if (sponsor.privateKey !== undefined && !/^(0x)?[0-9a-fA-F]{64}$/.test(sponsor.privateKey))
      throw new Error(`sponsorship.sponsors.${owner}.privateKey must be 32 bytes of hex`)
    await runtime.store.transaction(async (tx) => {
      if (await tx.get('sponsors', id)) return
      const privateKey = sponsor.privateKey
        ? hexToBytes(sponsor.privateKey.replace(/^0x/, ''))
        : secp256k1.utils.randomSecretKey()
      const now = runtime.now()
      await tx.put('sponsors', {
        id,
        family: 'eip155',
        address: addr.fromPrivateKey(`0x${bytesToHex(privateKey)}`),
        sealedPrivateKey: runtime.seal(privateKey),
        createdAt: now,
        updatedAt: now,
      })
      privateKey.fill(0)
    })
    const row = await runtime.store.get('sponsors', id)
    if (row) loaded.set(owner, row)
  }
  SPONSORS.set(runtime, loaded)
}

/** The sponsors each service loaded at start, by owner: read without a database round trip. */
const SPONSORS = new WeakMap<Runtime, Map<string, SponsorRow>>()

/** The sponsor of an organization: its own, its parent's, else the default; undefined when none. */
export function findSponsor(runtime: Runtime, organization: OrganizationRow): SponsorRow | undefined {
  const sponsors = SPONSORS.get(runtime)
  for (const owner of [organization.id, organization.parentOrganizationId, 'default'])
    if (owner !== undefined && sponsors?.has(owner)) return sponsors.get(owner)
  return undefined
}

/** The address an operator funds for `owner`'s sponsored EVM sends (undefined when not configured). */
export function sponsorAddress(runtime: Runtime, owner = 'default'): string | undefined {
  return SPONSORS.get(runtime)?.get(owner)?.address
}
