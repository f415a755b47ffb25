// `export_wallet` exports the mnemonic every account of the wallet derives its key from, and
// `delete_wallets` deletes every account of the wallets: the policies, the MFA conditions and a
// session profile's scope judge them once per account of each wallet, with that account as
// `wallet_account` (policies/walletAccountsOf.ts), read through the wallet index: a DENY on any
// account refuses, an ALLOW must hold for every one. Before, their scope had `wallet` and no
// `wallet_account`: a DENY on `wallet_account.address == <treasury>` failed to evaluate, the back
// end's ALLOW on exports decided, and the wallet's mnemonic (the treasury's key with it) was
// exported while `export_wallet_account` of the treasury was refused. Wallets holding more than
// MAX_WALLET_ACCOUNTS accounts are refused with a 403 saying why rather than judged by some.
import { hpkeOpen } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deriveAccount, mnemonicToSeed, openSignedBundle } from '../../src/kernel/crypto/index.ts'
import { Queries } from '../../src/kernel/store/Queries.ts'
import { MAX_WALLET_ACCOUNTS } from '../../src/policies/walletAccountsOf.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf } from '../../src/testing/harness.ts'
import { backEndSecondFactor, delegated } from '../policies/delegated.ts'
import { deploymentOn, usePostgres } from '../support/twoInstances.ts'

const SPENDING = { ...ETHEREUM_ACCOUNT, path: "m/44'/60'/0'/0/1" }
const clientKey = p256.utils.randomSecretKey()
const targetPublicKey = bytesToHex(p256.getPublicKey(clientKey, false))

afterEach(() => vi.restoreAllMocks())

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('')

/** The treasury's private key, if `reply` exported a mnemonic it derives from. */
async function treasuryKeyExported(
  h: Harness,
  reply: Awaited<ReturnType<Harness['submit']>>,
  treasury: string,
) {
  if (reply.status !== 200 || reply.body.activity?.status !== 'ACTIVITY_STATUS_COMPLETED') return false
  const data = openSignedBundle<{ encappedPublic: string; ciphertext: string }>(
    reply.body.activity.result.exportWalletResult.exportBundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  const mnemonic = new TextDecoder().decode(
    await hpkeOpen({
      ciphertext: data,
      receiverPublicKey: p256.getPublicKey(clientKey, false),
      dh: (sender) => p256.getSharedSecret(clientKey, sender, true).slice(1),
    }),
  )
  return deriveAccount(mnemonicToSeed(mnemonic), ETHEREUM_ACCOUNT as never).address.toLowerCase() === treasury
}

/**
 * An end user's wallet holding the treasury (account 0) and a spending account, a back end, and
 * a second wallet of the end user's (`other`, one account).
 */
async function treasuryAndOther(h?: Harness) {
  const t = await delegated([ETHEREUM_ACCOUNT, SPENDING], h)
  const treasury = (t.sub.addresses![0] as string).toLowerCase()
  t.h.clock.advance(1)
  const other = resultOf(
    'create_wallet',
    await t.h.submit('create_wallet', { walletName: 'Other', accounts: [ETHEREUM_ACCOUNT] }, t.asRoot),
  )
  const submit = (path: Parameters<Harness['submit']>[0], params: unknown, as = t.asBackend) => {
    t.h.clock.advance(1)
    return t.h.submit(path, params, as)
  }
  /** The back end's ALLOW on exporting (or deleting) any wallet. */
  const allowBackEnd = (action: 'EXPORT' | 'DELETE') =>
    t.policy({
      policyName: `back end ${action === 'EXPORT' ? 'exports' : 'deletes'}`,
      effect: 'EFFECT_ALLOW',
      condition: `activity.action == '${action}'`,
    })
  /** The owner's DENY on exporting (or deleting) the treasury account. */
  const denyTreasury = (action: 'EXPORT' | 'DELETE') =>
    t.policy({
      policyName: 'never the treasury account',
      effect: 'EFFECT_DENY',
      condition: `activity.action == '${action}' && wallet_account.address == '${treasury}'`,
    })
  return {
    ...t,
    treasury,
    walletId: t.sub.walletId!,
    otherWalletId: other.walletId as string,
    submit,
    allowBackEnd,
    denyTreasury,
  }
}

let filled = 0

/** `walletId` filled up to `count` accounts by rows written directly (other keys of the wallet). */
async function fillWallet(h: Harness, walletId: string, count: number) {
  const existing = await h.service.store.findBy('walletAccounts', 'walletId', walletId)
  const template = existing[0]!
  const rows = Array.from({ length: count - existing.length }, () => ({
    ...template,
    id: `filled-${++filled}`,
    path: `m/44'/60'/1'/0/${filled}`,
    address: `0x${hex(20)}`,
    publicKey: `02${hex(32)}`,
  }))
  await h.service.store.transaction(async (w) => {
    for (const row of rows) await w.put('walletAccounts', row)
  })
}

/** Counts the database queries made from now on (each a statement, whatever it returns). */
function countQueries(): () => number {
  const spies = [
    vi.spyOn(Queries.prototype, 'findBy'),
    vi.spyOn(Queries.prototype, 'pageBy'),
    vi.spyOn(Queries.prototype, 'get'),
    vi.spyOn(Queries.prototype, 'all'),
    vi.spyOn(Queries.prototype, 'count'),
  ]
  return () => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0)
}

describe('a DENY on one account of a wallet, and the activities on the whole wallet', () => {
  it('export_wallet of the wallet holding the treasury account is refused; the other is exported', async () => {
    const t = await treasuryAndOther()
    await t.allowBackEnd('EXPORT')
    await t.denyTreasury('EXPORT')
    const reply = await t.submit('export_wallet', { walletId: t.walletId, targetPublicKey })
    expect({
      status: reply.status,
      outcome: reply.body.details?.outcome,
      treasuryKeyExported: await treasuryKeyExported(t.h, reply, t.treasury),
      markedExported: (await t.h.service.store.get('wallets', t.walletId))?.exported,
    }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_EXPLICIT',
      treasuryKeyExported: false,
      markedExported: false,
    })
    // Control: the ALLOW exports a wallet none of whose accounts the DENY names.
    const other = await t.submit('export_wallet', { walletId: t.otherWalletId, targetPublicKey })
    expect(other.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    await t.h.service.close()
  })

  it('delete_wallets of the wallet holding the treasury account is refused, alone or among others', async () => {
    const t = await treasuryAndOther()
    await t.allowBackEnd('DELETE')
    await t.denyTreasury('DELETE')
    for (const walletIds of [[t.walletId], [t.otherWalletId, t.walletId]]) {
      const reply = await t.submit('delete_wallets', { walletIds, deleteWithoutExport: true })
      expect({ walletIds, status: reply.status, outcome: reply.body.details?.outcome }).toEqual({
        walletIds,
        status: 403,
        outcome: 'OUTCOME_DENY_EXPLICIT',
      })
    }
    expect(await t.h.service.store.findBy('walletAccounts', 'walletId', t.walletId)).toHaveLength(2)
    // Control: the other wallet alone is deleted.
    const other = await t.submit('delete_wallets', {
      walletIds: [t.otherWalletId],
      deleteWithoutExport: true,
    })
    expect(other.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await t.h.service.store.get('wallets', t.otherWalletId)).toBeUndefined()
    await t.h.service.close()
  })

  it('an ALLOW naming accounts exports the wallet only while it holds no other', async () => {
    const t = await treasuryAndOther()
    const [first, second] = (t.sub.addresses as string[]).map((address) => address.toLowerCase())
    await t.policy({
      policyName: 'back end exports these accounts',
      effect: 'EFFECT_ALLOW',
      condition: `activity.action == 'EXPORT' && wallet_account.address in ['${first}', '${second}']`,
    })
    const allowed = await t.submit('export_wallet', { walletId: t.walletId, targetPublicKey })
    expect(allowed.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    resultOf(
      'create_wallet_accounts',
      await t.submit(
        'create_wallet_accounts',
        { walletId: t.walletId, accounts: [{ ...ETHEREUM_ACCOUNT, path: "m/44'/60'/0'/0/2" }] },
        t.asRoot,
      ),
    )
    const third = await t.submit('export_wallet', { walletId: t.walletId, targetPublicKey })
    expect({ status: third.status, outcome: third.body.details?.outcome }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_IMPLICIT',
    })
    await t.h.service.close()
  })

  it('a wallet of no account holds none a DENY on wallet_account names: judged once, without it', async () => {
    const t = await treasuryAndOther()
    await t.allowBackEnd('EXPORT')
    await t.denyTreasury('EXPORT')
    const empty = resultOf(
      'create_wallet',
      await t.submit('create_wallet', { walletName: 'Empty', accounts: [] }, t.asRoot),
    )
    expect(empty.addresses).toEqual([])
    // Its mnemonic is new: no account of the organization derives from it. The DENY reads a keyword
    // the scope lacks (OUTCOME_ERROR), as for any activity without it, and refuses nothing.
    const exported = await t.submit('export_wallet', { walletId: empty.walletId, targetPublicKey })
    expect(exported.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    // An ALLOW that reads `wallet_account` does not hold there either: nothing is allowed by it.
    const second = resultOf(
      'create_wallet',
      await t.submit('create_wallet', { walletName: 'Empty too', accounts: [] }, t.asRoot),
    )
    await t.policy({
      policyName: 'the wallets of no account are the wallet DENY’s',
      effect: 'EFFECT_DENY',
      condition: `activity.action == 'EXPORT' && wallet.id == '${second.walletId}'`,
    })
    const refused = await t.submit('export_wallet', { walletId: second.walletId, targetPublicKey })
    expect({ status: refused.status, outcome: refused.body.details?.outcome }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_EXPLICIT',
    })
    await t.h.service.close()
  })

  it('an MFA condition on the treasury account holds export_wallet of its wallet; unevaluable, it holds', async () => {
    const t = await treasuryAndOther()
    await t.allowBackEnd('EXPORT')
    const { asBackend } = await backEndSecondFactor(t.h, t, [
      {
        name: 'the treasury leaves with a second factor',
        condition: `activity.action == 'EXPORT' && wallet_account.address == '${t.treasury}'`,
      },
    ])
    const empty = resultOf(
      'create_wallet',
      await t.submit('create_wallet', { walletName: 'Empty', accounts: [] }, t.asRoot),
    )
    const status = async (walletId: string) =>
      (await asBackend('export_wallet', { walletId, targetPublicKey })).body.activity?.status
    expect({
      treasury: await status(t.walletId),
      other: await status(t.otherWalletId),
      // No account: the condition does not evaluate, and holds the activity (MFA fails closed).
      empty: await status(empty.walletId as string),
    }).toEqual({
      treasury: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
      other: 'ACTIVITY_STATUS_COMPLETED',
      empty: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
    })
    await t.h.service.close()
  })
})

describe('the accounts of a wallet judged whole, bounded', () => {
  it(`judges up to ${MAX_WALLET_ACCOUNTS} accounts with about as many queries as 2, and refuses past them with a 403 saying why`, async () => {
    const t = await treasuryAndOther()
    await t.policy({
      policyName: 'back end exports and deletes',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'EXPORT' || activity.action == 'DELETE'",
    })
    await t.denyTreasury('EXPORT')
    const exportCost = async (walletId: string) => {
      const queries = countQueries()
      const reply = await t.submit('export_wallet', { walletId, targetPublicKey })
      const count = queries()
      vi.restoreAllMocks()
      return { status: reply.body.activity?.status ?? reply.status, queries: count }
    }
    // The other wallet, up to the bound (its one real account among them): exported, with a few
    // queries more or less (the store's caches) as for 2 accounts; a query an account, a thousand.
    await fillWallet(t.h, t.otherWalletId, 2)
    const small = await exportCost(t.otherWalletId)
    await fillWallet(t.h, t.otherWalletId, MAX_WALLET_ACCOUNTS)
    const large = await exportCost(t.otherWalletId)
    expect({
      small: small.status,
      large: large.status,
      fewQueries: large.queries < small.queries + 10,
    }).toEqual({
      small: 'ACTIVITY_STATUS_COMPLETED',
      large: 'ACTIVITY_STATUS_COMPLETED',
      fewQueries: true,
    })
    // The treasury's wallet filled to the bound: its treasury account still refuses it.
    await fillWallet(t.h, t.walletId, MAX_WALLET_ACCOUNTS)
    const denied = await t.submit('export_wallet', { walletId: t.walletId, targetPublicKey })
    expect(denied.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')

    // Two wallets of the bound each, deleted together: more in all, refused as a whole.
    const both = await t.submit('delete_wallets', {
      walletIds: [t.walletId, t.otherWalletId],
      deleteWithoutExport: true,
    })
    expect({ status: both.status, field: both.body.details?.field }).toEqual({
      status: 403,
      field: 'parameters.walletIds',
    })
    expect(both.body.message).toMatch(`more than ${MAX_WALLET_ACCOUNTS} accounts in all`)

    // One more account in a wallet: refused with a 403 saying why, exported or deleted.
    await fillWallet(t.h, t.otherWalletId, MAX_WALLET_ACCOUNTS + 1)
    const past = await t.submit('export_wallet', { walletId: t.otherWalletId, targetPublicKey })
    expect({
      status: past.status,
      code: past.body.details?.errorCode,
      field: past.body.details?.field,
      max: past.body.details?.maxWalletAccounts,
    }).toEqual({
      status: 403,
      code: 'PERMISSION_DENIED',
      field: 'parameters.walletId',
      max: MAX_WALLET_ACCOUNTS,
    })
    expect(past.body.message).toMatch(`holds more than ${MAX_WALLET_ACCOUNTS} accounts`)
    const deleted = await t.submit('delete_wallets', {
      walletIds: [t.otherWalletId],
      deleteWithoutExport: true,
    })
    expect({ status: deleted.status, field: deleted.body.details?.field }).toEqual({
      status: 403,
      field: 'parameters.walletIds',
    })
    expect(await t.h.service.store.get('wallets', t.otherWalletId)).toBeDefined()
    await t.h.service.close()
  }, 120_000)

  it('another organization’s wallet of many accounts is not found, not measured', async () => {
    const t = await treasuryAndOther()
    await t.allowBackEnd('EXPORT')
    const foreign = await t.h.createSubOrganization({
      wallet: { walletName: 'Foreign', accounts: [ETHEREUM_ACCOUNT] },
    })
    await fillWallet(t.h, foreign.walletId!, MAX_WALLET_ACCOUNTS + 1)
    const reply = await t.submit('export_wallet', { walletId: foreign.walletId, targetPublicKey })
    expect(reply.status).toBe(404)
    await t.h.service.close()
  }, 60_000)
})

describe('on PostgreSQL', () => {
  const postgres = usePostgres()

  it('refuses export_wallet of the treasury’s wallet, and past the bound, reading a page of the index', async () => {
    const h = await deploymentOn(postgres.cluster, 'export_wallet_accounts').open()
    const t = await treasuryAndOther(h)
    await t.allowBackEnd('EXPORT')
    await t.denyTreasury('EXPORT')
    const denied = await t.submit('export_wallet', { walletId: t.walletId, targetPublicKey })
    expect(denied.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    const other = await t.submit('export_wallet', { walletId: t.otherWalletId, targetPublicKey })
    expect(other.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    await fillWallet(t.h, t.otherWalletId, MAX_WALLET_ACCOUNTS + 1)
    const past = await t.submit('export_wallet', { walletId: t.otherWalletId, targetPublicKey })
    expect({ status: past.status, code: past.body.details?.errorCode }).toEqual({
      status: 403,
      code: 'PERMISSION_DENIED',
    })
    await t.h.service.close()
  }, 600_000)
})
