// delete_sub_organization refuses, without deleteWithoutExport, while the account holds a wallet
// never exported: its mnemonic would be gone with the account. A create_wallet of that account in
// flight while the deletion commits (admitted before it, its transaction after it) is a snapshot
// run of the request's reads on PostgreSQL: it decides on the organization as admission read it
// and only inserts rows, so no SERIALIZABLE read conflicted with the deletion. It answered
// COMPLETED with the new wallet's address after the account, its users and keys were gone: a
// wallet nobody can export or sign with (funds sent to the address it answered are stranded),
// in an organization that no longer exists, past the export guard. Its rows now go in only while
// the organization's row exists, by a statement that rewrites that row (Store.transaction's
// `owner`): a deletion committed first leaves the run to rerun as a transaction, which is refused
// as on SQLite (the key went with the account); one under way when the rows go in conflicts on the
// row, reruns and sees the wallet. import_wallet and import_private_key run in SERIALIZABLE
// transactions that read the credential and the organization: refused likewise.
import { hpkeSeal } from '@latchkey/protocol/hpke'
import { hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { openSignedBundle } from '../../src/kernel/crypto/index.ts'
import type { ServicePlugin } from '../../src/kernel/registry.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Reply,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import { refusal, submitRacing } from '../security/inFlight.ts'
import { useTwoInstances } from '../support/twoInstances.ts'

const ABANDON =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'

/** Run once inside the next delete_sub_organization's transaction, after it read the account's wallets. */
let insideDeletion: (() => Promise<void>) | undefined

/** Where the deletion runs `insideDeletion`: when it asks the plugins to forget the account (its first run only). */
const pausesDeletion: ServicePlugin = {
  name: 'pausesDeletion',
  async forget() {
    const during = insideDeletion
    insideDeletion = undefined
    await during?.()
  },
}

const pair = useTwoInstances('wallet_in_deleted_account', { options: { plugins: [pausesDeletion] } })
const shown = (reply: Reply) => JSON.stringify(reply.body?.activity?.result ?? reply.body)

/** What is left of `organizationId`: its row, and the wallets, accounts and private keys in it. */
async function leftOf(h: Harness, organizationId: string) {
  const store = h.service.store
  return {
    organization: await store.get('organizations', organizationId),
    rows: [
      ...(await store.findBy('wallets', 'organizationId', organizationId)),
      ...(await store.findBy('walletAccounts', 'organizationId', organizationId)),
      ...(await store.findBy('privateKeys', 'organizationId', organizationId)),
    ],
  }
}

/** A sub-organization with one root user, `as` it. */
async function account(h: Harness) {
  const root = testKey()
  const { organizationId, userIds } = await h.createSubOrganization({ keys: [root] })
  h.clock.advance(1)
  return { root, organizationId, userId: userIds[0]!, as: { as: root, organizationId } }
}

/** `deleting`'s delete_sub_organization of the account `root` is a root user of: answered 200. */
async function deleteAccount(deleting: Harness, root: TestKey, organizationId: string) {
  const deleted = await deleting.submit('delete_sub_organization', {}, { as: root, organizationId })
  expect(deleted.status, shown(deleted)).toBe(200)
}

/** A create_wallet on `admitting`, admitted before `deleting` deletes its account, run after. */
async function createdWhileDeleted(admitting: Harness, deleting: Harness) {
  const { root, organizationId, as } = await account(admitting)
  const created = await submitRacing(
    admitting,
    () => deleteAccount(deleting, root, organizationId),
    'create_wallet',
    { walletName: 'in flight', accounts: [ETHEREUM_ACCOUNT] },
    as,
  )
  return { created, ...(await leftOf(admitting, organizationId)) }
}

/** `data` sealed to the import target `initPath` made for the account's root user. */
async function sealed(
  h: Harness,
  { userId, as }: Awaited<ReturnType<typeof account>>,
  initPath: 'init_import_wallet' | 'init_import_private_key',
  data: Uint8Array,
) {
  const { importBundle } = resultOf(initPath, await h.submit(initPath, { userId }, as))
  h.clock.advance(1)
  const { targetPublic } = openSignedBundle<{ targetPublic: string }>(
    importBundle,
    hexToBytes(h.service.dev.signerPublicKey),
  )
  return JSON.stringify(hpkeSeal({ plaintext: data, receiverPublicKey: hexToBytes(targetPublic) }))
}

/** import_wallet and import_private_key on `admitting`, each admitted before `deleting` deletes its account, run after. */
async function importedWhileDeleted(admitting: Harness, deleting: Harness) {
  const outcomes = []
  for (const path of ['import_wallet', 'import_private_key'] as const) {
    const target = await account(admitting)
    const encryptedBundle =
      path === 'import_wallet'
        ? await sealed(admitting, target, 'init_import_wallet', new TextEncoder().encode(ABANDON))
        : await sealed(admitting, target, 'init_import_private_key', new Uint8Array(32).fill(7))
    const parameters =
      path === 'import_wallet'
        ? { userId: target.userId, walletName: 'in flight', encryptedBundle, accounts: [ETHEREUM_ACCOUNT] }
        : {
            userId: target.userId,
            privateKeyName: 'in flight',
            encryptedBundle,
            curve: 'CURVE_SECP256K1',
            addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
          }
    const reply = await submitRacing(
      admitting,
      () => deleteAccount(deleting, target.root, target.organizationId),
      path,
      parameters,
      target.as,
    )
    outcomes.push({ path, refusal: refusal(reply), ...(await leftOf(admitting, target.organizationId)) })
  }
  return outcomes
}

/** What `importedWhileDeleted` gives when each import is refused as its key went with its account. */
const importsRefused = ['import_wallet', 'import_private_key'].map((path) => ({
  path,
  refusal: [401, 'PUBLIC_KEY_NOT_FOUND'],
  organization: undefined,
  rows: [],
}))

/**
 * Runs the `submissions` on `h` with their transactions held until all of them have reached
 * theirs, then runs `during`, then lets them all go at once: their snapshot runs' rows go in
 * together, in one shared statement.
 */
async function togetherAfter(h: Harness, during: () => Promise<void>, submissions: (() => Promise<Reply>)[]) {
  const timings = h.service.runtime.timings
  const original = timings.time.bind(timings)
  let arrived = 0
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  timings.time = (async (stage: string, work: () => Promise<unknown>) => {
    if (stage === 'transaction') {
      arrived++
      if (arrived === submissions.length) {
        await during()
        release()
      }
      await released
    }
    return original(stage as never, work)
  }) as typeof timings.time
  try {
    return await Promise.all(submissions.map((submit) => submit()))
  } finally {
    timings.time = original
  }
}

describe('create_wallet in flight while its account is deleted', { timeout: 120_000 }, () => {
  describe('PostgreSQL, two instances', () => {
    it.each([
      ['A admits, B deletes', 'a', 'b'],
      ['B admits, A deletes', 'b', 'a'],
      ['one instance admits and deletes', 'a', 'a'],
    ] as const)(
      'deleted before its rows go in (%s): refused, nothing left in the deleted account',
      async (_, admits, deletes) => {
        const { created, organization, rows } = await createdWhileDeleted(pair[admits], pair[deletes])
        expect(organization).toBeUndefined()
        expect(refusal(created), shown(created)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
        expect(rows).toEqual([])
      },
    )

    it.each([
      ['A deletes, B creates', 'a', 'b'],
      ['B deletes, A creates', 'b', 'a'],
    ] as const)(
      'its rows go in while the deletion is under way (%s): the deletion reruns and sees the wallet',
      async (_, deletes, creates) => {
        const deleting = pair[deletes]
        const creating = pair[creates]
        for (const deleteWithoutExport of [false, true]) {
          const { root, organizationId, as } = await account(deleting)
          let created: Reply | undefined
          insideDeletion = async () => {
            created = await creating.submit(
              'create_wallet',
              { walletName: 'during the deletion', accounts: [ETHEREUM_ACCOUNT] },
              as,
            )
          }
          const deleted = await deleting.submit(
            'delete_sub_organization',
            deleteWithoutExport ? { deleteWithoutExport } : {},
            { as: root, organizationId },
          )
          expect(insideDeletion).toBeUndefined()
          expect(created?.status, shown(created!)).toBe(200)
          const left = await leftOf(deleting, organizationId)
          if (deleteWithoutExport) {
            // Deleted with the account it was made in: no row of it outlives the organization.
            expect(deleted.status, shown(deleted)).toBe(200)
            expect(left).toEqual({ organization: undefined, rows: [] })
          } else {
            // The export guard saw it: the account stays, with the wallet it answered.
            expect(refusal(deleted), shown(deleted)).toEqual([412, 'WALLET_NOT_EXPORTED'])
            expect(left.organization?.id).toBe(organizationId)
            expect(left.rows.map((row) => row.id)).toContain(
              created!.body.activity.result.createWalletResult.walletId,
            )
          }
          deleting.clock.advance(1)
        }
      },
    )

    it('the deletion of another account does not refuse it', async () => {
      const { a, b } = pair
      const other = await account(b)
      const { as, organizationId } = await account(a)
      const created = await submitRacing(
        a,
        () => deleteAccount(b, other.root, other.organizationId),
        'create_wallet',
        { walletName: 'beside a deletion', accounts: [ETHEREUM_ACCOUNT] },
        as,
      )
      const { walletId } = resultOf('create_wallet', created)
      expect((await leftOf(a, organizationId)).rows.map((row) => row.id)).toContain(walletId)
      expect((await leftOf(a, other.organizationId)).organization).toBeUndefined()
    })

    it('in one shared insert with other accounts’ wallets: only the deleted account’s is refused', async () => {
      const { a, b } = pair
      const deleted = await account(a)
      const others = [await account(a), await account(a), await account(a)]
      const before = a.service.store.batching().inserts!
      const create = (as: { as: TestKey; organizationId: string }) => () =>
        a.submit('create_wallet', { walletName: 'together', accounts: [ETHEREUM_ACCOUNT] }, as)
      const [refused, ...created] = await togetherAfter(
        a,
        () => deleteAccount(b, deleted.root, deleted.organizationId),
        [create(deleted.as), ...others.map((other) => create(other.as))],
      )
      const after = a.service.store.batching().inserts!
      // All four runs' rows went to the database in one statement.
      expect({ batches: after.batches - before.batches, items: after.items - before.items }).toEqual({
        batches: 1,
        items: 4,
      })
      expect(refusal(refused!), shown(refused!)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
      expect(await leftOf(a, deleted.organizationId)).toEqual({ organization: undefined, rows: [] })
      for (const [index, other] of others.entries()) {
        const { walletId } = resultOf('create_wallet', created[index]!)
        expect((await leftOf(a, other.organizationId)).rows.map((row) => row.id)).toContain(walletId)
      }
    })

    it.each([
      ['A admits, B deletes', 'a', 'b'],
      ['B admits, A deletes', 'b', 'a'],
    ] as const)(
      'import_wallet and import_private_key (%s): refused, nothing left',
      async (_, admits, deletes) => {
        expect(await importedWhileDeleted(pair[admits], pair[deletes])).toEqual(importsRefused)
      },
    )
  })

  describe('control, SQLite', () => {
    it('refused (the key went with the account), nothing left; another account’s deletion refuses nothing', async () => {
      const h = await createHarness()
      try {
        const { created, organization, rows } = await createdWhileDeleted(h, h)
        expect(refusal(created), shown(created)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
        expect({ organization, rows }).toEqual({ organization: undefined, rows: [] })
        expect(await importedWhileDeleted(h, h)).toEqual(importsRefused)
        const other = await account(h)
        const { as } = await account(h)
        const beside = await submitRacing(
          h,
          () => deleteAccount(h, other.root, other.organizationId),
          'create_wallet',
          { walletName: 'beside a deletion', accounts: [ETHEREUM_ACCOUNT] },
          as,
        )
        expect(beside.status, shown(beside)).toBe(200)
      } finally {
        await h.service.close()
      }
    })
  })
})
