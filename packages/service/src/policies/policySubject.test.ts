import { ACTIVITIES, type ActivityPath } from '@latchkey/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openMemoryStore } from '../kernel/store/memory.ts'
import type { Store } from '../kernel/store/Store.ts'
import { policyContextsOf } from './policyContextOf.ts'
import { POLICY_SUBJECTS, policySubjectOf, undeclaredSubjects } from './policySubject.ts'

const ORG = 'org-subject'
const TREASURY = `0x${'1'.repeat(40)}`
const SPENDING = `0x${'2'.repeat(40)}`
const row = { createdAt: 0, updatedAt: 0, organizationId: ORG }
const wallet = (id: string) => ({ ...row, id, name: id, exported: false, imported: false })
const account = (id: string, walletId: string, address: string) => ({ ...row, id, walletId, address })

describe('POLICY_SUBJECTS', () => {
  it('says what every activity on a wallet or key acts on', () => {
    expect(undeclaredSubjects()).toEqual([])
    for (const path of Object.keys(POLICY_SUBJECTS))
      expect(['WALLET', 'PRIVATE_KEY'], path).toContain(ACTIVITIES[path as ActivityPath].resource)
  })

  it('reads the first parameter given, and no other', () => {
    expect(policySubjectOf('sol_send_transaction', { signWiths: ['a', 'b'], signWith: 'c' })).toEqual({
      accounts: ['a', 'b'],
      walletIds: [],
      everyAccount: false,
    })
    expect(policySubjectOf('sol_send_transaction', { signWith: 'c' }).accounts).toEqual(['c'])
    expect(policySubjectOf('eth_send_transaction', { from: '0xa', signWith: '0xb' }).accounts).toEqual([
      '0xa',
    ])
    expect(policySubjectOf('export_wallet', { walletId: 'w', signWith: '0xb' })).toEqual({
      accounts: [],
      walletIds: ['w'],
      walletsField: 'parameters.walletId',
      // It exports the mnemonic every account of the wallet derives from.
      everyAccount: true,
    })
    // An activity on no wallet names none, whatever its intent carries.
    expect(policySubjectOf('create_policy', { signWith: '0xb', walletId: 'w' })).toEqual({
      accounts: [],
      walletIds: [],
      everyAccount: false,
    })
    // Adding accounts acts on the wallet, not on the accounts it holds.
    expect(policySubjectOf('create_wallet_accounts', { walletId: 'w' }).everyAccount).toBe(false)
    expect(policySubjectOf('delete_wallets', { walletIds: ['w'] })).toMatchObject({
      walletsField: 'parameters.walletIds',
      everyAccount: true,
    })
    // Not strings: the handler refuses it; nothing is named.
    expect(policySubjectOf('delete_wallets', { walletIds: ['w', 7] }).walletIds).toEqual([])
  })
})

describe('the wallet policies judge', () => {
  let store: Store
  beforeAll(async () => {
    store = await openMemoryStore()
    await store.transaction(async (tx) => {
      for (const id of ['treasury', 'spending']) await tx.put('wallets', wallet(id) as never)
      await tx.put('walletAccounts', account('a-t', 'treasury', TREASURY) as never)
      await tx.put('walletAccounts', account('a-s', 'spending', SPENDING) as never)
    })
  })
  afterAll(() => store.close())

  const walletsOf = async (path: string, intent: Record<string, unknown>) =>
    (
      await policyContextsOf(store, {
        id: 'activity',
        organizationId: ORG,
        path,
        type: ACTIVITIES[path as ActivityPath].types[0]!,
        intent,
      })
    ).map((scope) => (scope.wallet as { id?: string } | undefined)?.id)

  it.each([
    ['eth_send_transaction', { from: TREASURY, caip2: 'eip155:1', calls: [{ to: `0x${'3'.repeat(40)}` }] }],
    ['sol_send_transaction', { signWiths: [TREASURY] }],
    ['export_wallet_account', { address: TREASURY }],
    ['export_wallet', { walletId: 'treasury' }],
    ['create_wallet_accounts', { walletId: 'treasury' }],
    ['delete_wallets', { walletIds: ['treasury'] }],
  ])('%s: the wallet its handler acts on, not an added signWith', async (path, intent) => {
    expect(await walletsOf(path, { ...intent, signWith: SPENDING })).toEqual(['treasury'])
  })

  it('every wallet of several, each in a scope of its own', async () => {
    expect(
      await walletsOf('delete_wallets', { walletIds: ['spending', 'treasury'], signWith: SPENDING }),
    ).toEqual(['spending', 'treasury'])
    expect(
      await walletsOf('sol_send_transaction', {
        signWiths: [SPENDING, TREASURY],
        signWith: SPENDING,
      }),
    ).toEqual(['spending', 'treasury'])
  })

  it('every account of a wallet exported or deleted whole, each in a scope of its own', async () => {
    const accountsOf = async (path: string, intent: Record<string, unknown>) =>
      (
        await policyContextsOf(store, {
          id: 'activity',
          organizationId: ORG,
          path,
          type: ACTIVITIES[path as ActivityPath].types[0]!,
          intent,
        })
      ).map((scope) => [
        (scope.wallet as { id?: string } | undefined)?.id,
        (scope.wallet_account as { address?: string } | undefined)?.address,
      ])
    await store.transaction(async (tx) => {
      await tx.put('walletAccounts', account('a-t2', 'treasury', SPENDING.replace('2', '4')) as never)
      await tx.put('wallets', wallet('empty') as never)
    })
    const second = SPENDING.replace('2', '4')
    expect(await accountsOf('export_wallet', { walletId: 'treasury' })).toEqual([
      ['treasury', TREASURY],
      ['treasury', second],
    ])
    expect(await accountsOf('delete_wallets', { walletIds: ['spending', 'treasury', 'empty'] })).toEqual([
      ['spending', SPENDING],
      ['treasury', TREASURY],
      ['treasury', second],
      ['empty', undefined],
    ])
    // Adding accounts acts on none of those the wallet holds.
    expect(await accountsOf('create_wallet_accounts', { walletId: 'treasury' })).toEqual([
      ['treasury', undefined],
    ])
    await store.transaction(async (tx) => {
      await tx.delete('walletAccounts', 'a-t2')
      await tx.delete('wallets', 'empty')
    })
  })

  it('no wallet for an activity on none, whatever it names', async () => {
    expect(await walletsOf('create_policy', { signWith: SPENDING, walletId: 'spending' })).toEqual([
      undefined,
    ])
  })
})
