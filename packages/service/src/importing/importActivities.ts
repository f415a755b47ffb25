import {
  type ImportedUser,
  type ImportUserParams,
  type ImportUserResult,
  MAX_IMPORTED_USERS_QUERY,
  namesOAuthIdentity,
  oauthIdentityKey,
} from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { cose, decodeCredentialPublicKey, verifySignature } from '@simplewebauthn/server/helpers'
import { accountHolds } from '../domain/claimedValues.ts'
import { storePrivateKey } from '../domain/privateKeys.ts'
import { callerVouchesForContacts } from '../domain/verifiedContact.ts'
import { createWalletRecords } from '../domain/wallets.ts'
import { accountClaimId } from '../kernel/accountClaims.ts'
import { recordAppEvent } from '../kernel/appEvents.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { ConflictError, FieldError, PermissionError } from '../kernel/base/errors.ts'
import {
  CryptoInputError,
  type ImportWalletResult,
  normalizeMnemonic,
  openImportCiphertext,
  p256PublicKey,
  randomP256PrivateKey,
  signBundle,
  validateMnemonic,
} from '../kernel/crypto/index.ts'
import { stringItem } from '../kernel/Reader.ts'
import { type ActivityContext, defineActivity, defineQuery, type QueryContext } from '../kernel/registry.ts'
import type { ImportClaimRow, ImportKeyRow } from '../kernel/store/model.ts'
import type { Lookup, Reads } from '../kernel/store/Reads.ts'
import {
  ORGANIZATION_IMPORT_KEY_PURPOSE,
  type OrganizationImportBundleData,
} from './organizationImportKey.ts'
import { readImportUser } from './readImportUser.ts'

/** A row id derived from the parent organization and a value: one row per value, decided by the primary key. */
const derivedId = (organizationId: string, kind: string, value: string) =>
  bytesToHex(sha256(utf8ToBytes(`${organizationId}\n${kind}\n${value}`))).slice(0, 40)
const claimId = (organizationId: string, kind: ImportClaimRow['kind'], value: string) =>
  accountClaimId(organizationId, kind, value)

/** Only the root users of a top-level organization import users: they vouch for the contacts. */
function requireOperator(ctx: Pick<ActivityContext, 'organization' | 'caller'>): void {
  if (!callerVouchesForContacts(ctx))
    throw new PermissionError({
      field: 'organizationId',
      message: 'users are imported by a root user of a top-level organization, into its sub-organizations',
    })
}

/** The organization's import key, made on first use (sealed at rest). */
async function importKeyOf(ctx: ActivityContext): Promise<ImportKeyRow> {
  const existing = await ctx.tx.get('importKeys', ctx.organization.id)
  if (existing) return existing
  const privateKey = randomP256PrivateKey()
  try {
    return await ctx.tx.put('importKeys', {
      id: ctx.organization.id,
      organizationId: ctx.organization.id,
      sealedPrivateKey: ctx.runtime.seal(privateKey),
      publicKey: bytesToHex(p256PublicKey(privateKey, false)),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
  } finally {
    privateKey.fill(0)
  }
}

/**
 * `latchkey_init_user_import`: the organization's long-lived import key, as an import bundle signed
 * by the signer key (the same format as `init_import_wallet`'s, its `userId` the caller), with the
 * purpose `organization_import_key`, which no user's target carries: a client takes a bundle for
 * this key only with it, and a user's import only without it. Wallets and private keys of
 * `latchkey_import_user` are HPKE-encrypted to it.
 */
export const initUserImport = defineActivity('latchkey_init_user_import', {
  parse: (r) => {
    const [unknown] = Object.keys(r.value)
    if (unknown !== undefined)
      throw new FieldError({
        field: r.field(unknown),
        reason: 'is an unknown field: this activity takes no parameters',
      })
    return {} as Record<string, never>
  },
  run: async (ctx) => {
    requireOperator(ctx)
    const key = await importKeyOf(ctx)
    const signerPrivateKey = ctx.runtime.signerPrivateKey()
    try {
      const data: OrganizationImportBundleData = {
        organizationId: ctx.organization.id,
        userId: ctx.caller.userId,
        // Stored uncompressed, lower-case: the spelling of every import bundle's key.
        targetPublic: key.publicKey,
        purpose: ORGANIZATION_IMPORT_KEY_PURPOSE,
      }
      return { importBundle: signBundle(data, signerPrivateKey) }
    } finally {
      signerPrivateKey.fill(0)
    }
  },
})

/**
 * The seal of a bundle encrypted to the import key: its HPKE encapsulated key, the sender's fresh
 * ephemeral key, in one spelling (uncompressed, lower-case hex), so a bundle re-spelt (its JSON
 * reformatted, its hex upper-cased, its key compressed) is the same bundle; another ciphertext
 * under the same encapsulated key opens only for whoever sealed it. Undefined when it names no
 * P-256 point (such a bundle does not open).
 */
function sealOf(encryptedBundle: string): string | undefined {
  try {
    const { encappedPublic } = JSON.parse(encryptedBundle) as { encappedPublic?: unknown }
    if (typeof encappedPublic !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(encappedPublic)) return undefined
    return bytesToHex(p256.Point.fromBytes(hexToBytes(encappedPublic.toLowerCase())).toBytes(false))
  } catch {
    return undefined
  }
}

/** The id of the row that spends a bundle (`importSpentBundles`): derived from the parent and its seal. */
const spentBundleId = (organizationId: string, seal: string) => derivedId(organizationId, 'bundle', seal)

/** A bundle of the line, the row id that spends it, and the field that carries it. */
interface LineBundle {
  id: string | undefined
  field: string
}

/** The line's bundles, wallets' then private keys', each with its spent-row id (from its seal). */
function bundlesOf(
  organizationId: string,
  p: Pick<ImportUserParams, 'wallets' | 'privateKeys'>,
): LineBundle[] {
  return [
    ...(p.wallets ?? []).map((w, i) => ({ bundle: w.encryptedBundle, field: `parameters.wallets[${i}]` })),
    ...(p.privateKeys ?? []).map((k, i) => ({
      bundle: k.encryptedBundle,
      field: `parameters.privateKeys[${i}]`,
    })),
  ].map(({ bundle, field }) => {
    const seal = sealOf(bundle)
    return {
      id: seal === undefined ? undefined : spentBundleId(organizationId, seal),
      field: `${field}.encryptedBundle`,
    }
  })
}

/**
 * Refuses a bundle an import opened before (409 naming it) or one the line gives twice: a bundle
 * encrypted to the organization's long-lived import key opens once, into the account it was made
 * for, so one copied from an activity record cannot be imported into another account. Read before
 * the line writes any spent row (a snapshot run reads no table it wrote).
 */
async function refuseSpent(ctx: ActivityContext, bundles: LineBundle[]): Promise<void> {
  const seen = new Set<string>()
  for (const { id, field } of bundles) {
    if (id === undefined) continue
    if (seen.has(id))
      throw new FieldError({ code: 'BUNDLE_INVALID', field, reason: 'is given twice in this line' })
    seen.add(id)
    const spent = await ctx.tx.get('importSpentBundles', id)
    if (spent)
      throw new ConflictError({
        field,
        message: `${field} was imported before (as ${JSON.stringify(spent.externalId)}): a bundle opens once; encrypt the secret to the import key anew`,
      })
  }
}

/** Opens a bundle encrypted to the organization's import key; the caller wipes the plaintext. */
async function openBundle(ctx: ActivityContext, encryptedBundle: string, field: string): Promise<Uint8Array> {
  const key = await ctx.tx.get('importKeys', ctx.organization.id)
  if (!key)
    throw new FieldError({
      code: 'BUNDLE_INVALID',
      field,
      message: 'this organization has no import key yet; call latchkey_init_user_import first',
    })
  const targetPrivateKey = ctx.runtime.open(key.sealedPrivateKey)
  try {
    return await openImportCiphertext({
      encryptedBundle,
      targetPrivateKey,
      targetPublicKey: hexToBytes(key.publicKey),
    })
  } catch (error) {
    throw new FieldError({
      code: 'BUNDLE_INVALID',
      field,
      message:
        error instanceof CryptoInputError && error.message.endsWith('is not JSON')
          ? `${field} is not an HPKE ciphertext`
          : `${field} does not open with this organization's import key (encrypted to another key?)`,
    })
  } finally {
    targetPrivateKey.fill(0)
  }
}

/** The claims this user makes: its contacts, OAuth identities and passkeys, each once per parent. */
function claimsOf(p: ImportUserParams): { kind: ImportClaimRow['kind']; value: string; field: string }[] {
  return [
    ...(p.email !== undefined ? [{ kind: 'email' as const, value: p.email, field: 'parameters.email' }] : []),
    ...(p.phoneNumber !== undefined
      ? [{ kind: 'phone' as const, value: p.phoneNumber, field: 'parameters.phoneNumber' }]
      : []),
    ...(p.oauthProviders ?? []).map((o, i) => ({
      kind: 'oauth' as const,
      value: oauthIdentityKey(o),
      field: `parameters.oauthProviders[${i}]`,
    })),
    ...(p.passkeys ?? []).map((k, i) => ({
      kind: 'passkey' as const,
      value: k.credentialId.replace(/=+$/, ''),
      field: `parameters.passkeys[${i}].credentialId`,
    })),
  ]
}

/**
 * Refuses a claim another account of this parent holds (by import, or an OAuth identity or passkey
 * of any account). A claim whose account no longer holds the value (deleted, or the contact
 * changed, before releases were made in the same transaction) is taken over.
 */
async function refuseTaken(ctx: ActivityContext, p: ImportUserParams): Promise<void> {
  const seen = new Set<string>()
  for (const claim of claimsOf(p)) {
    if (seen.has(`${claim.kind}\n${claim.value}`))
      throw new FieldError({ field: claim.field, reason: 'is given twice' })
    seen.add(`${claim.kind}\n${claim.value}`)
    const held = await ctx.tx.get('importClaims', claimId(ctx.organization.id, claim.kind, claim.value))
    if (held && (await accountHolds(ctx.tx, held.subOrganizationId, claim)))
      throw new ConflictError({
        field: claim.field,
        message:
          held.externalId !== undefined
            ? `${claim.field} already belongs to the account imported as ${JSON.stringify(held.externalId)}`
            : `${claim.field} already belongs to another account of this organization`,
      })
  }
  const underParent = async (organizationId: string) =>
    (await ctx.tx.get('organizations', organizationId))?.parentOrganizationId === ctx.organization.id
  // A contact another account holds verified (pregenerated, signed up, set with proof) is refused
  // as one an import claimed is: it routes that person's logins.
  const contacts = [
    ...(p.email !== undefined ? [{ kind: 'email' as const, value: p.email, field: 'parameters.email' }] : []),
    ...(p.phoneNumber !== undefined
      ? [{ kind: 'phone' as const, value: p.phoneNumber, field: 'parameters.phoneNumber' }]
      : []),
  ]
  for (const contact of contacts)
    for (const row of await ctx.tx.findBy(
      'users',
      contact.kind === 'email' ? 'verifiedEmail' : 'verifiedPhone',
      contact.value,
    ))
      if (await underParent(row.organizationId))
        throw new ConflictError({
          field: contact.field,
          message: `${contact.field} already belongs to another account of this organization`,
        })
  for (const [i, o] of (p.oauthProviders ?? []).entries())
    for (const row of await ctx.tx.findBy('oauthProviders', 'subject', o.subject))
      if (namesOAuthIdentity(row, o) && (await underParent(row.organizationId)))
        throw new ConflictError({
          field: `parameters.oauthProviders[${i}]`,
          message: 'this OAuth identity already belongs to an account of this organization',
        })
  for (const [i, k] of (p.passkeys ?? []).entries())
    for (const row of await ctx.tx.findBy(
      'authenticators',
      'credentialId',
      k.credentialId.replace(/=+$/, ''),
    ))
      if (await underParent(row.organizationId))
        throw new ConflictError({
          field: `parameters.passkeys[${i}].credentialId`,
          message: 'this passkey already belongs to an account of this organization',
        })
}

function fromBase64url(value: string, field: string): Uint8Array {
  let bytes: Uint8Array
  try {
    bytes = base64urlnopad.decode(value.replace(/=+$/, ''))
  } catch {
    throw new FieldError({ field, reason: 'must be base64url' })
  }
  if (bytes.length === 0) throw new FieldError({ field, reason: 'must not be empty' })
  return bytes
}

/**
 * Refuses the import when an address the line lists is not one its wallets or keys derive (from
 * what this transaction made: read back, the rows would take the transaction off its snapshot).
 */
function requireAddresses(derived: string[], addresses: string[]) {
  const made = new Set(derived.map((address) => address.toLowerCase()))
  const missing = addresses.findIndex((address) => !made.has(address.toLowerCase()))
  if (missing >= 0)
    throw new FieldError({
      field: `parameters.addresses[${missing}]`,
      reason:
        'is not derived by any wallet account or private key of this line: the wrong secret for this person?',
    })
}

/** An ECDSA signature in DER (r = s = 1): one any EC2 key can be asked to check. */
const PROBE_SIGNATURE = Uint8Array.from([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01])

/**
 * A passkey's COSE public key (base64url), refused unless it decodes to a key WebAuthn can verify
 * with: the login's own verifier (`verifySignature`) is asked to check a signature with it, and
 * throws (where a usable key answers false) for a key it cannot open, one without its point or
 * with a point off its curve, which would refuse every login of the person.
 */
async function readCoseKey(value: string, field: string): Promise<Uint8Array> {
  const bytes = fromBase64url(value, field)
  let alg: unknown
  try {
    alg = decodeCredentialPublicKey(new Uint8Array(bytes)).get(cose.COSEKEYS.alg)
  } catch {
    throw new FieldError({ field, reason: 'must be a COSE public key (CBOR)' })
  }
  if (typeof alg !== 'number' || !cose.isCOSEAlg(alg))
    throw new FieldError({ field, reason: 'must be a COSE public key of a WebAuthn algorithm' })
  try {
    await verifySignature({
      signature: PROBE_SIGNATURE,
      data: new Uint8Array(1),
      credentialPublicKey: new Uint8Array(bytes),
    })
  } catch {
    throw new FieldError({
      field,
      reason: 'must be a whole COSE public key (its curve and point, or modulus)',
    })
  }
  return bytes
}

/** A string field of the parameters as sent (not validated yet), else undefined. */
const sent = (value: unknown, name: string): string | undefined => {
  const field = (value as Record<string, unknown> | null)?.[name]
  return typeof field === 'string' && field.length <= 1024 ? field : undefined
}

/**
 * What `latchkey_import_user`'s run reads, from its parameters as sent: the external id's record,
 * the import key, each claim, and the OAuth identities and passkeys of the same values. A value
 * parsing changes (an e-mail's case) is simply read in the transaction.
 */
function importLookups(organizationId: string, parameters: unknown): Lookup[] {
  const externalId = sent(parameters, 'externalId')
  if (externalId === undefined) return []
  const claim = (kind: ImportClaimRow['kind'], value: string | undefined): Lookup[] =>
    value === undefined ? [] : [{ table: 'importClaims', id: claimId(organizationId, kind, value) }]
  const email = sent(parameters, 'email')?.trim().toLowerCase()
  const phoneNumber = sent(parameters, 'phoneNumber')
  const list = (name: string) => {
    const items = (parameters as Record<string, unknown>)[name]
    return Array.isArray(items) ? items.slice(0, 10) : []
  }
  const recordId = derivedId(organizationId, 'externalId', externalId)
  return [
    // Found, it is a skip: whether its account still exists is read in a transaction (a rerun
    // of the snapshot run), which `latchkey-service import` rarely meets, as it asks first.
    { table: 'importedUsers', id: recordId },
    { table: 'importKeys', id: organizationId },
    ...claim('email', email),
    ...(email !== undefined ? [{ table: 'users', field: 'verifiedEmail', value: email } as const] : []),
    ...claim('phone', phoneNumber),
    ...(phoneNumber !== undefined
      ? [{ table: 'users', field: 'verifiedPhone', value: phoneNumber } as const]
      : []),
    ...list('oauthProviders').flatMap((o): Lookup[] => {
      const issuer = sent(o, 'issuer')
      const subject = sent(o, 'subject')
      if (issuer === undefined || subject === undefined) return []
      return [
        ...claim('oauth', oauthIdentityKey({ issuer, subject })),
        { table: 'oauthProviders', field: 'subject', value: subject },
      ]
    }),
    ...list('passkeys').flatMap((k): Lookup[] => {
      const credentialId = sent(k, 'credentialId')?.replace(/=+$/, '')
      if (credentialId === undefined) return []
      return [
        ...claim('passkey', credentialId),
        { table: 'authenticators', field: 'credentialId', value: credentialId },
      ]
    }),
    // Whether each bundle was spent (a bundle is at most 16 KiB, as parsing caps it).
    ...[...list('wallets'), ...list('privateKeys')].flatMap((item): Lookup[] => {
      const bundle = (item as Record<string, unknown> | null)?.encryptedBundle
      const seal = typeof bundle === 'string' && bundle.length <= 16 * 1024 ? sealOf(bundle) : undefined
      return seal === undefined
        ? []
        : [{ table: 'importSpentBundles', id: spentBundleId(organizationId, seal) }]
    }),
  ]
}

/** True while the account an import made exists: a sub-organization keeps its root users until it is deleted. */
const accountExists = async (ctx: { tx: Pick<Reads, 'findBy'> }, subOrganizationId: string) =>
  (await ctx.tx.findBy('users', 'organizationId', subOrganizationId)).length > 0

/**
 * What `precompute` hands `run`: each wallet opened, derived and sealed by a crypto job (in a
 * worker thread where the service has them), with the import key it was opened with.
 */
interface EarlyWallets {
  sealedTargetKey: string
  wallets: (ImportWalletResult | undefined)[]
}

/**
 * The transaction's wallet from the precomputed job, when it ran with the key the transaction
 * reads and met no bad input (otherwise `run` opens and derives again, naming the field at fault).
 */
async function earlyWallet(ctx: ActivityContext, index: number) {
  const early = ctx.precomputed as EarlyWallets | undefined
  if (!early) return undefined
  const key = await ctx.tx.get('importKeys', ctx.organization.id)
  if (key?.sealedPrivateKey !== early.sealedTargetKey) return undefined
  const result = early.wallets[index]
  return result && !('error' in result) ? result : undefined
}

/**
 * `latchkey_import_user`: one person, in one transaction: a sub-organization of the caller's
 * organization whose root user holds the given contacts (verified: the operator vouches), OAuth
 * identities and passkeys, with the wallets and private keys encrypted to the import key. An
 * external id imported before is answered with that import (`skipped`) and nothing is written, so
 * a rerun of a file (or two racing instances) imports each person once. An external id whose
 * account was deleted since is imported again.
 */
export const importUser = defineActivity('latchkey_import_user', {
  parse: (r) => readImportUser(r),
  // Every row it writes is new, and the rows two imports could both claim (the external id, each
  // contact, OAuth identity and passkey) have ids derived from them: a concurrent duplicate meets
  // the primary key and reruns in a transaction, which finds the first. So on PostgreSQL its
  // transaction is a snapshot run of what `lookups` read ahead, not a SERIALIZABLE one (which
  // conflicted with every concurrent import on the claims' index pages and reran, many times).
  createsOnly: true,
  lookups: importLookups,
  // The bundles are ciphertext to the organization's long-lived import key, unspent until the
  // import opens them: whoever holds one imports it once, into an account of their choosing. So
  // no record shows them, whatever its status (`get_activity`, the answer, a replay, a vote's
  // answer), not even to the submitter, who holds the line: an import waiting (the root quorum,
  // its submitter's second factor) keeps them in its stored record only, to run from it, and
  // another root user of the parent, whose own imports wait for nothing, cannot copy them out of
  // it. Once it has ended (imported, refused, rejected) the stored record keeps none either.
  bearerParameters: ['wallets[].encryptedBundle', 'privateKeys[].encryptedBundle'],
  // Its record shows the passkeys it imports (kernel/passkeySightings.ts): a copy registered
  // elsewhere once the account lets one go is not the first registration of it.
  passkeyParameters: ['passkeys[]'],
  // HPKE opening, BIP-39 seed, BIP-32 derivation and sealing (the import's CPU) run before the
  // transaction, in the crypto workers where the service has them; the transaction only writes.
  precompute: async (ctx, p) => {
    // A caller `run` refuses gets no CPU spent on opening wallets first.
    if (!p.wallets?.length || !callerVouchesForContacts(ctx)) return undefined
    const key = await ctx.reads.get('importKeys', ctx.organization.id)
    if (!key) return undefined
    const bundles = bundlesOf(ctx.organization.id, { wallets: p.wallets })
    return {
      sealedTargetKey: key.sealedPrivateKey,
      wallets: await Promise.all(
        p.wallets.map(async (w, i) => {
          // A bundle spent already is refused by `run`: no CPU spent on opening it.
          const id = bundles[i]?.id
          if (id === undefined || (await ctx.reads.get('importSpentBundles', id))) return undefined
          return ctx.runtime.crypto
            .run({
              kind: 'importWallet',
              sealedTargetKey: key.sealedPrivateKey,
              targetPublicKey: key.publicKey,
              encryptedBundle: w.encryptedBundle,
              accounts: w.accounts,
            })
            .catch(() => undefined)
        }),
      ),
    } satisfies EarlyWallets
  },
  run: async (ctx, p): Promise<ImportUserResult> => {
    requireOperator(ctx)
    const recordId = derivedId(ctx.organization.id, 'externalId', p.externalId)
    const done = await ctx.tx.get('importedUsers', recordId)
    if (done && !(await accountExists(ctx, done.subOrganizationId)))
      // Its account was deleted: the person is imported anew under the same external id.
      await ctx.tx.delete('importedUsers', recordId)
    else if (done)
      return {
        subOrganizationId: done.subOrganizationId,
        userId: done.userId,
        walletIds: done.walletIds,
        privateKeyIds: done.privateKeyIds,
        skipped: true,
      }
    await refuseTaken(ctx, p)
    const bundles = bundlesOf(ctx.organization.id, p)
    await refuseSpent(ctx, bundles)
    const subOrganizationId = ctx.newId()
    const user = await ctx.tx.put('users', {
      id: ctx.newId(),
      organizationId: subOrganizationId,
      userName: p.userName ?? p.email ?? p.phoneNumber ?? p.externalId,
      ...(p.email !== undefined ? { userEmail: p.email } : {}),
      ...(p.phoneNumber !== undefined ? { userPhoneNumber: p.phoneNumber } : {}),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    const subOrganization = await ctx.tx.put('organizations', {
      id: subOrganizationId,
      name: p.userName ?? p.externalId,
      parentOrganizationId: ctx.organization.id,
      rootUserIds: [user.id],
      rootQuorumThreshold: 1,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    for (const o of p.oauthProviders ?? [])
      await ctx.tx.put('oauthProviders', {
        id: ctx.newId(),
        organizationId: subOrganizationId,
        userId: user.id,
        providerName: o.providerName ?? 'imported',
        issuer: o.issuer,
        audience: o.audience ?? '',
        subject: o.subject,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
    for (const [i, k] of (p.passkeys ?? []).entries()) {
      const coseKey = await readCoseKey(k.cosePublicKey, `parameters.passkeys[${i}].cosePublicKey`)
      await ctx.tx.put('authenticators', {
        id: ctx.newId(),
        organizationId: subOrganizationId,
        userId: user.id,
        name: k.name ?? 'imported passkey',
        credentialId: k.credentialId.replace(/=+$/, ''),
        cosePublicKey: base64urlnopad.encode(coseKey),
        publicKeyHex: bytesToHex(coseKey),
        counter: k.counter ?? 0,
        aaguid: '00000000-0000-0000-0000-000000000000',
        model: '',
        attestationType: 'none',
        transports: [],
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
    }
    const derived: string[] = []
    const made: { walletId: string; addresses: string[] }[] = []
    const walletIds = await mapInOrder(p.wallets ?? [], async (w, i) => {
      const field = `parameters.wallets[${i}]`
      const sealed = await earlyWallet(ctx, i)
      if (sealed) {
        const wallet = await createWalletRecords(ctx, {
          organizationId: subOrganizationId,
          walletName: w.walletName,
          accounts: w.accounts,
          sealed,
          imported: true,
          field: `${field}.accounts`,
        })
        derived.push(...wallet.addresses)
        made.push(wallet)
        return wallet.walletId
      }
      const plaintext = await openBundle(ctx, w.encryptedBundle, `${field}.encryptedBundle`)
      const mnemonic = normalizeMnemonic(new TextDecoder().decode(plaintext))
      plaintext.fill(0)
      if (!validateMnemonic(mnemonic))
        throw new FieldError({
          code: 'BUNDLE_INVALID',
          field: `${field}.encryptedBundle`,
          message: `${field}.encryptedBundle does not hold a BIP-39 mnemonic`,
        })
      const wallet = await createWalletRecords(ctx, {
        organizationId: subOrganizationId,
        walletName: w.walletName,
        accounts: w.accounts,
        mnemonic,
        imported: true,
        field: `${field}.accounts`,
      })
      derived.push(...wallet.addresses)
      made.push(wallet)
      return wallet.walletId
    })
    const inSub: ActivityContext = { ...ctx, organization: subOrganization }
    const privateKeyIds = await mapInOrder(p.privateKeys ?? [], async (k, i) => {
      const field = `parameters.privateKeys[${i}]`
      const privateKey = await openBundle(ctx, k.encryptedBundle, `${field}.encryptedBundle`)
      try {
        const row = await storePrivateKey(
          inSub,
          { ...k, privateKeyTags: [], privateKey, imported: true },
          field,
        )
        derived.push(...row.addresses.map(({ address }) => address))
        return row.id
      } finally {
        privateKey.fill(0)
      }
    })
    if (p.addresses && walletIds.length + privateKeyIds.length > 0) requireAddresses(derived, p.addresses)
    for (const claim of claimsOf(p))
      await ctx.tx.put('importClaims', {
        id: claimId(ctx.organization.id, claim.kind, claim.value),
        organizationId: ctx.organization.id,
        kind: claim.kind,
        subOrganizationId,
        externalId: p.externalId,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
    // Every bundle the line opened is spent, in this transaction: a concurrent import of the same
    // bundle meets the primary key, reruns and is refused by `refuseSpent`.
    for (const { id, field } of bundles) {
      // A bundle that opened names a point: its seal is known.
      if (id === undefined)
        throw new FieldError({ code: 'BUNDLE_INVALID', field, reason: 'is not an HPKE ciphertext' })
      await ctx.tx.put('importSpentBundles', {
        id,
        organizationId: ctx.organization.id,
        subOrganizationId,
        externalId: p.externalId,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
    }
    await ctx.tx.put('importedUsers', {
      id: recordId,
      organizationId: ctx.organization.id,
      externalId: p.externalId,
      subOrganizationId,
      userId: user.id,
      walletIds,
      privateKeyIds,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    await recordImportEvents(ctx, { subOrganizationId, userId: user.id, wallets: made })
    return { subOrganizationId, userId: user.id, walletIds, privateKeyIds, skipped: false }
  },
})

/**
 * An imported account is a sign-up, and its wallets are created wallets, to an app's webhooks as
 * a `create_sub_organization` with a wallet is (pipeline/activityEvents.ts): `LATCHKEY_SIGN_UP` in
 * the parent, `LATCHKEY_WALLET_CREATED` in the new account. Ids derive from the activity's, so a
 * rerun writes the same events; a skipped line (imported before) makes none.
 */
async function recordImportEvents(
  ctx: ActivityContext,
  made: { subOrganizationId: string; userId: string; wallets: { walletId: string; addresses: string[] }[] },
): Promise<void> {
  const parent = { id: ctx.organization.id, parentOrganizationId: ctx.organization.parentOrganizationId }
  await recordAppEvent(ctx.runtime, ctx.tx, {
    id: `${ctx.activityId}.signup`,
    organization: parent,
    type: 'LATCHKEY_SIGN_UP',
    data: {
      subOrganizationId: made.subOrganizationId,
      rootUserIds: [made.userId],
      ...(made.wallets[0] ? { walletId: made.wallets[0].walletId } : {}),
    },
  })
  for (const [i, wallet] of made.wallets.entries())
    await recordAppEvent(ctx.runtime, ctx.tx, {
      id: `${ctx.activityId}.wallet${i === 0 ? '' : `.${i}`}`,
      organization: { id: made.subOrganizationId, parentOrganizationId: ctx.organization.id },
      type: 'LATCHKEY_WALLET_CREATED',
      data: { walletId: wallet.walletId, addresses: wallet.addresses },
    })
}

/**
 * `latchkey_get_imported_users`: which of the given external ids (at most 100) this organization
 * imported, into accounts that still exist. A rerun of `latchkey-service import` asks once per
 * hundred lines and sends only the others, so a line already done costs no encryption, no stamp
 * and no activity. The answer lists only the ids found; an id whose account was deleted is absent
 * (importing it again makes a new account).
 */
export const getImportedUsers = defineQuery('latchkey_get_imported_users', {
  parse: (r) => ({
    externalIds: r.array(
      'externalIds',
      (value, field) => {
        const id = stringItem(value, field)
        if (id.length > 256) throw new FieldError({ field, reason: 'must be at most 256 characters' })
        return id
      },
      { min: 1, max: MAX_IMPORTED_USERS_QUERY },
    ),
  }),
  run: async (ctx: QueryContext, { externalIds }) => {
    requireOperator(ctx)
    const ids = [...new Set(externalIds)].map((externalId) =>
      derivedId(ctx.organization.id, 'externalId', externalId),
    )
    // The records in one statement where the database reads ahead; then each found one's account.
    const reads = await ctx.runtime.store.prefetch(ids.map((id): Lookup => ({ table: 'importedUsers', id })))
    const found = await Promise.all(
      ids.map(async (id): Promise<ImportedUser | undefined> => {
        const done = await reads.get('importedUsers', id)
        if (!done || !(await accountExists({ tx: reads }, done.subOrganizationId))) return undefined
        return {
          externalId: done.externalId,
          subOrganizationId: done.subOrganizationId,
          userId: done.userId,
          walletIds: done.walletIds,
          privateKeyIds: done.privateKeyIds,
        }
      }),
    )
    return { importedUsers: found.filter((user) => user !== undefined) }
  },
})
