import { ed25519 } from '@noble/curves/ed25519.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { getAddressDecoder } from '@solana/addresses'
import { addr } from 'micro-eth-signer'
import { ServiceError } from '../kernel/base/errors.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { OrganizationRow, SponsorRow } from '../kernel/store/model.ts'
import type { SponsorshipOptions } from './SendingOptions.ts'

/** The chain families a sponsor pays on: EVM (EIP-7702 batches) and Solana (the fee payer). */
export type SponsorFamily = 'eip155' | 'solana'

/** The id of a sponsor row: its owner (`default` or an organization id) and chain family. */
export const sponsorIdOf = (owner: string, family: SponsorFamily = 'eip155') => `${owner}|${family}`

/** How each family's key is given, made and turned into an address. */
const FAMILIES: Record<
  SponsorFamily,
  {
    option: 'privateKey' | 'solanaPrivateKey'
    randomKey: () => Uint8Array
    addressOf: (key: Uint8Array) => string
  }
> = {
  eip155: {
    option: 'privateKey',
    randomKey: () => secp256k1.utils.randomSecretKey(),
    addressOf: (key) => addr.fromPrivateKey(`0x${bytesToHex(key)}`),
  },
  solana: {
    option: 'solanaPrivateKey',
    randomKey: () => ed25519.utils.randomSecretKey(),
    addressOf: (key) => getAddressDecoder().decode(ed25519.getPublicKey(key)),
  },
}

/**
 * Seals the keys (EVM and Solana) of every configured sponsor that has no row yet: the one given,
 * or a fresh one. Idempotent, and safe with several instances starting at once (the row's id is
 * its owner and family).
 */
export async function ensureSponsors(runtime: Runtime, options: SponsorshipOptions): Promise<void> {
  const sponsors = options.sponsors ?? { default: {} }
  const loaded = new Map<string, SponsorRow>()
  for (const [owner, sponsor] of Object.entries(sponsors)) {
    for (const [family, { option, randomKey, addressOf }] of Object.entries(FAMILIES) as [
      SponsorFamily,
      (typeof FAMILIES)[SponsorFamily],
    ][]) {
      const id = sponsorIdOf(owner, family)
      const given = sponsor[option]
      if (given !== undefined && !/^(0x)?[0-9a-fA-F]{64}$/.test(given))
        throw new Error(`sponsorship.sponsors.${owner}.${option} must be 32 bytes of hex`)
      await runtime.store.transaction(async (tx) => {
        const sealed = await tx.get('sponsors', id)
        // A key given now that is not the one sealed would be silently ignored: the operator would
        // fund one address while another pays.
        if (sealed && given !== undefined) {
          const key = hexToBytes(given.replace(/^0x/, ''))
          const address = addressOf(key)
          key.fill(0)
          if (address !== sealed.address)
            throw new SponsorKeyMismatchError(owner, family, sealed.address, address)
        }
        if (sealed) return
        const privateKey = given ? hexToBytes(given.replace(/^0x/, '')) : randomKey()
        const now = runtime.now()
        await tx.put('sponsors', {
          id,
          family,
          address: addressOf(privateKey),
          sealedPrivateKey: runtime.seal(privateKey),
          createdAt: now,
          updatedAt: now,
        })
        privateKey.fill(0)
      })
      const row = await runtime.store.get('sponsors', id)
      if (row) loaded.set(id, row)
    }
  }
  SPONSORS.set(runtime, loaded)
}

/** The configured sponsor key is not the one the database sealed on an earlier start. */
export class SponsorKeyMismatchError extends ServiceError {
  override name = 'SponsorKeyMismatchError'
  constructor(owner: string, family: SponsorFamily, sealed: string, given: string) {
    super(
      `sponsorship.sponsors.${owner}.${family === 'eip155' ? 'private_key' : 'solana_private_key'}: the database holds the sponsor key of ${sealed}, sealed on an earlier start; the key given is ${given}'s. Give the key of ${sealed}, or remove the key to keep using it`,
    )
  }
}

/** The sponsors each service loaded at start, by row id: read without a database round trip. */
const SPONSORS = new WeakMap<Runtime, Map<string, SponsorRow>>()

/** The sponsor of an organization: its own, its parent's, else the default; undefined when none. */
export function findSponsor(
  runtime: Runtime,
  organization: OrganizationRow,
  family: SponsorFamily = 'eip155',
): SponsorRow | undefined {
  const sponsors = SPONSORS.get(runtime)
  for (const owner of [organization.id, organization.parentOrganizationId, 'default']) {
    const row = owner === undefined ? undefined : sponsors?.get(sponsorIdOf(owner, family))
    if (row) return row
  }
  return undefined
}

/** Every sponsor the service loaded at start (owner and family in the row id `owner|family`). */
export function loadedSponsors(runtime: Runtime): SponsorRow[] {
  return [...(SPONSORS.get(runtime)?.values() ?? [])]
}

/** The address an operator funds for `owner`'s sponsored sends on `family` (undefined when not configured). */
export function sponsorAddress(
  runtime: Runtime,
  owner = 'default',
  family: SponsorFamily = 'eip155',
): string | undefined {
  return SPONSORS.get(runtime)?.get(sponsorIdOf(owner, family))?.address
}
