import { ADDRESS_FORMATS, type AddressFormat, CURVES, type Curve } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { FieldError, NotFoundError } from '../kernel/base/errors.ts'
import { timestampOf } from '../kernel/base/ids.ts'
import {
  addressFromPublicKey,
  assertAddressFormatForCurve,
  CryptoInputError,
} from '../kernel/crypto/index.ts'
import { Reader, stringItem } from '../kernel/Reader.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import type { PrivateKeyRow, WalletAccountRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'

export interface PrivateKeyParams {
  privateKeyName: string
  curve: Curve
  privateKeyTags: string[]
  addressFormats: AddressFormat[]
}

export function readPrivateKeyParams(value: unknown, field: string): PrivateKeyParams {
  const r = new Reader(value, field)
  return {
    privateKeyName: r.string('privateKeyName', { max: 256 }),
    curve: r.enum('curve', CURVES),
    privateKeyTags: r.optArray('privateKeyTags', stringItem, { max: 10 }) ?? [],
    addressFormats: readAddressFormats(r),
  }
}

export function readAddressFormats(r: Reader): AddressFormat[] {
  return (
    r.optArray(
      'addressFormats',
      (value, field) => {
        if (!(ADDRESS_FORMATS as readonly unknown[]).includes(value))
          throw new FieldError({ code: 'ENUM_INVALID', field, reason: 'must be an ADDRESS_FORMAT_* value' })
        return value as AddressFormat
      },
      { max: 10 },
    ) ?? []
  )
}

/**
 * Stores a private key (32 bytes: a secp256k1 scalar or an ed25519 seed) sealed, with its public
 * key and one address per format. The caller wipes `privateKey`.
 */
export async function storePrivateKey(
  ctx: ActivityContext,
  params: PrivateKeyParams & { privateKey: Uint8Array; imported: boolean },
  field: string,
): Promise<PrivateKeyRow> {
  if (params.privateKey.length !== 32)
    throw new FieldError({
      code: 'BUNDLE_INVALID',
      field: `${field}.encryptedBundle`,
      message: `the private key must be 32 bytes, got ${params.privateKey.length}`,
    })
  let publicKey: Uint8Array
  try {
    publicKey =
      params.curve === 'CURVE_SECP256K1'
        ? secp256k1.getPublicKey(params.privateKey, true)
        : ed25519.getPublicKey(params.privateKey)
  } catch {
    throw new FieldError({
      code: 'BUNDLE_INVALID',
      field: `${field}.encryptedBundle`,
      message: `not a valid ${params.curve} private key`,
    })
  }
  const addresses = params.addressFormats.map((format, index) => {
    try {
      assertAddressFormatForCurve(format, params.curve)
    } catch (error) {
      if (error instanceof CryptoInputError)
        throw new FieldError({ field: `${field}.addressFormats[${index}]`, message: error.message })
      throw error
    }
    return { format, address: addressFromPublicKey(format, publicKey) }
  })
  return await ctx.tx.put('privateKeys', {
    id: ctx.newId(),
    organizationId: ctx.organization.id,
    name: params.privateKeyName,
    curve: params.curve,
    publicKey: bytesToHex(publicKey),
    sealedPrivateKey: ctx.runtime.seal(params.privateKey),
    addresses,
    privateKeyTags: params.privateKeyTags,
    exported: false,
    imported: params.imported,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  })
}

export async function findPrivateKey(
  reads: Reads,
  organizationId: string,
  id: string,
  field: string,
): Promise<PrivateKeyRow> {
  const row = await reads.get('privateKeys', id)
  if (!row || row.organizationId !== organizationId)
    throw new NotFoundError({
      code: 'KEY_NOT_FOUND',
      field,
      message: `private key ${id} not found in organization ${organizationId}`,
    })
  return row
}

/**
 * A private key as a signer (`signWith` = its id or one of its addresses), shaped like the wallet
 * account the signing activities take; it belongs to no wallet.
 */
export async function privateKeySigner(
  reads: Reads,
  organizationId: string,
  signWith: string,
): Promise<WalletAccountRow | undefined> {
  const byId = await reads.get('privateKeys', signWith)
  const lower = signWith.toLowerCase()
  const row =
    byId?.organizationId === organizationId
      ? byId
      : (await reads.findBy('privateKeys', 'organizationId', organizationId)).find((key) =>
          key.addresses.some(
            (a) => a.address === signWith || (/^0x/i.test(signWith) && a.address.toLowerCase() === lower),
          ),
        )
  if (!row) return undefined
  const address = row.addresses[0]
  return {
    id: row.id,
    organizationId: row.organizationId,
    walletId: '',
    curve: row.curve,
    pathFormat: 'PATH_FORMAT_BIP32',
    path: '',
    addressFormat:
      address?.format ??
      (row.curve === 'CURVE_SECP256K1' ? 'ADDRESS_FORMAT_COMPRESSED' : 'ADDRESS_FORMAT_SOLANA'),
    address: address?.address ?? row.publicKey,
    publicKey: row.publicKey,
    sealedPrivateKey: row.sealedPrivateKey,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

export function renderPrivateKey(row: PrivateKeyRow) {
  return {
    privateKeyId: row.id,
    publicKey: row.publicKey,
    privateKeyName: row.name,
    curve: row.curve,
    addresses: row.addresses,
    privateKeyTags: row.privateKeyTags,
    createdAt: timestampOf(row.createdAt),
    updatedAt: timestampOf(row.updatedAt),
    exported: row.exported,
    imported: row.imported,
  }
}
