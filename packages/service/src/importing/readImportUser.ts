import type { ImportUserParams } from '@latchkey/protocol'
import { CURVES, canonicalIssuer } from '@latchkey/protocol'
import { assertProviderIssuer } from '../domain/oauthIssuers.ts'
import { readAccounts } from '../domain/params.ts'
import { readAddressFormats } from '../domain/privateKeys.ts'
import { FieldError } from '../kernel/base/errors.ts'
import { EMAIL_ADDRESS, EMAIL_ADDRESS_HINT } from '../kernel/emailAddress.ts'
import { Reader, stringItem } from '../kernel/Reader.ts'

/** The fields of one imported user, and of each of its parts: anything else is refused by name. */
const FIELDS = {
  user: [
    'externalId',
    'userName',
    'email',
    'phoneNumber',
    'oauthProviders',
    'passkeys',
    'wallets',
    'privateKeys',
    'addresses',
  ],
  oauthProviders: ['issuer', 'subject', 'audience', 'providerName'],
  passkeys: ['credentialId', 'cosePublicKey', 'name', 'counter'],
  wallets: ['walletName', 'encryptedBundle', 'accounts'],
  privateKeys: ['privateKeyName', 'encryptedBundle', 'curve', 'addressFormats'],
} as const

const PHONE = /^\+[1-9]\d{6,14}$/
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/

/** Refuses a field `r` holds that is not one of `known`, naming it. */
function onlyFields(r: Reader, known: readonly string[]): void {
  for (const name of Object.keys(r.value))
    if (!known.includes(name))
      throw new FieldError({
        field: r.field(name),
        reason: `is an unknown field (known: ${known.join(', ')})`,
      })
}

/** Reads one imported user (`latchkey_import_user`'s parameters, one line of an import file). */
export function readImportUser(r: Reader): ImportUserParams {
  onlyFields(r, FIELDS.user)
  const userName = r.optString('userName', { max: 256 })
  const email = r.optString('email', { max: 320, pattern: EMAIL_ADDRESS, hint: EMAIL_ADDRESS_HINT })
  const phoneNumber = r.optString('phoneNumber', {
    max: 16,
    pattern: PHONE,
    hint: 'an E.164 phone number such as +15551234567',
  })
  const oauthProviders = r.optArray(
    'oauthProviders',
    (value, field) => {
      const item = new Reader(value, field)
      onlyFields(item, FIELDS.oauthProviders)
      // Recorded in the spelling every path compares (Google's two are one).
      const issuer = canonicalIssuer(item.string('issuer', { max: 512 }))
      assertProviderIssuer(issuer, `${field}.issuer`)
      const audience = item.optString('audience', { max: 512 })
      return {
        issuer,
        subject: item.string('subject', { max: 512 }),
        ...(audience !== undefined ? { audience } : {}),
        providerName: item.optString('providerName', { max: 256 }) ?? 'imported',
      }
    },
    { max: 10 },
  )
  const passkeys = r.optArray(
    'passkeys',
    (value, field) => {
      const item = new Reader(value, field)
      onlyFields(item, FIELDS.passkeys)
      // The authenticator's signature counter is 32 bits: a stored one above it would refuse every login.
      const counter = item.optInt('counter', { min: 0, max: 0xffff_ffff })
      return {
        credentialId: item.string('credentialId', { max: 1024, pattern: BASE64URL, hint: 'base64url' }),
        cosePublicKey: item.string('cosePublicKey', { max: 2048, pattern: BASE64URL, hint: 'base64url' }),
        name: item.optString('name', { max: 256 }) ?? 'imported passkey',
        ...(counter !== undefined ? { counter } : {}),
      }
    },
    { max: 10 },
  )
  const wallets = r.optArray(
    'wallets',
    (value, field) => {
      const item = new Reader(value, field)
      onlyFields(item, FIELDS.wallets)
      return {
        walletName: item.string('walletName', { max: 256 }),
        encryptedBundle: item.string('encryptedBundle', { max: 16 * 1024 }),
        accounts: readAccounts(item, 'accounts', 1),
      }
    },
    { max: 10 },
  )
  const privateKeys = r.optArray(
    'privateKeys',
    (value, field) => {
      const item = new Reader(value, field)
      onlyFields(item, FIELDS.privateKeys)
      return {
        privateKeyName: item.string('privateKeyName', { max: 256 }),
        encryptedBundle: item.string('encryptedBundle', { max: 16 * 1024 }),
        curve: item.enum('curve', CURVES),
        addressFormats: readAddressFormats(item),
      }
    },
    { max: 10 },
  )
  const addresses = r.optArray('addresses', (value, field) => stringItem(value, field), { max: 100 })
  return {
    externalId: r.string('externalId', { max: 256 }),
    ...(addresses ? { addresses } : {}),
    ...(userName !== undefined ? { userName } : {}),
    ...(email !== undefined ? { email: email.trim().toLowerCase() } : {}),
    ...(phoneNumber !== undefined ? { phoneNumber } : {}),
    ...(oauthProviders ? { oauthProviders } : {}),
    ...(passkeys ? { passkeys } : {}),
    ...(wallets ? { wallets } : {}),
    ...(privateKeys ? { privateKeys } : {}),
  }
}
