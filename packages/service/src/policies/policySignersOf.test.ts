import { ACTIVITIES, type ActivityPath } from '@latchkey/protocol'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addressFromPublicKey } from '../kernel/crypto/addresses.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import type { Store } from '../kernel/store/Store.ts'
import { policyContextsOf } from './policyContextOf.ts'

const ORG = 'org-signers'
const row = { createdAt: 0, updatedAt: 0, organizationId: ORG }
const key = (seed: number) => secp256k1.getPublicKey(new Uint8Array(32).fill(seed), true)
const TREASURY_KEY = key(1)
const SPENDING_KEY = key(2)
const TREASURY = addressFromPublicKey('ADDRESS_FORMAT_ETHEREUM', TREASURY_KEY).toLowerCase()
const TREASURY_COMPRESSED = addressFromPublicKey('ADDRESS_FORMAT_COMPRESSED', TREASURY_KEY)
const SPENDING = addressFromPublicKey('ADDRESS_FORMAT_ETHEREUM', SPENDING_KEY).toLowerCase()
const KEY_ADDRESS = addressFromPublicKey('ADDRESS_FORMAT_ETHEREUM', key(3)).toLowerCase()
const KEY_COMPRESSED = addressFromPublicKey('ADDRESS_FORMAT_COMPRESSED', key(3))

const account = (id: string, path: string, addressFormat: string, publicKey: Uint8Array) => ({
  ...row,
  id,
  walletId: 'main',
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path,
  addressFormat,
  address: addressFromPublicKey(addressFormat as never, publicKey),
  publicKey: bytesToHex(publicKey),
  sealedPrivateKey: '',
})

describe('the signers policies judge', () => {
  let store: Store
  beforeAll(async () => {
    store = await openMemoryStore()
    await store.transaction(async (tx) => {
      await tx.put('wallets', { ...row, id: 'main', name: 'Main', exported: false, imported: false } as never)
      await tx.put(
        'walletAccounts',
        account('eth', "m/44'/60'/0'/0/0", 'ADDRESS_FORMAT_ETHEREUM', TREASURY_KEY) as never,
      )
      await tx.put(
        'walletAccounts',
        account('cmp', "m/44'/60'/0'/0/0", 'ADDRESS_FORMAT_COMPRESSED', TREASURY_KEY) as never,
      )
      await tx.put(
        'walletAccounts',
        account('spend', "m/44'/60'/0'/0/1", 'ADDRESS_FORMAT_ETHEREUM', SPENDING_KEY) as never,
      )
      await tx.put('privateKeys', {
        ...row,
        id: 'pk',
        name: 'pk',
        curve: 'CURVE_SECP256K1',
        publicKey: bytesToHex(key(3)),
        addresses: [
          { format: 'ADDRESS_FORMAT_COMPRESSED', address: KEY_COMPRESSED },
          { format: 'ADDRESS_FORMAT_ETHEREUM', address: KEY_ADDRESS },
        ],
        privateKeyTags: [],
        sealedPrivateKey: '',
        exported: false,
        imported: false,
      } as never)
    })
  })
  afterAll(() => store.close())

  const scopesOf = async (path: string, intent: Record<string, unknown>) =>
    (
      await policyContextsOf(store, {
        id: 'activity',
        organizationId: ORG,
        path,
        type: ACTIVITIES[path as ActivityPath].types[0]!,
        intent,
      })
    ).map((scope) => ({
      account: (scope.wallet_account as { address?: string } | undefined)?.address,
      from: ((scope.eth as { tx?: { from?: string } } | undefined)?.tx as { from?: string } | undefined)
        ?.from,
      to: ((scope.eth as { tx?: { to?: string } } | undefined)?.tx as { to?: string } | undefined)?.to,
    }))

  it('every account of the key, each with the key’s 0x address as eth.tx.from, per call of a send', async () => {
    const calls = [{ to: SPENDING }, { to: KEY_ADDRESS }]
    const expected = [
      { account: TREASURY_COMPRESSED, from: TREASURY, to: SPENDING },
      { account: TREASURY_COMPRESSED, from: TREASURY, to: KEY_ADDRESS },
      { account: TREASURY, from: TREASURY, to: SPENDING },
      { account: TREASURY, from: TREASURY, to: KEY_ADDRESS },
    ]
    expect(
      await scopesOf('eth_send_transaction', { from: TREASURY_COMPRESSED, caip2: 'eip155:1', calls }),
    ).toEqual(expected)
    // Named by its 0x address, the same scopes (the one named first).
    expect(await scopesOf('eth_send_transaction', { from: TREASURY, caip2: 'eip155:1', calls })).toEqual([
      expected[2],
      expected[3],
      expected[0],
      expected[1],
    ])
  })

  it('another key of the wallet is not judged with it, and one address of the key once', async () => {
    expect(await scopesOf('export_wallet_account', { address: SPENDING })).toEqual([
      { account: SPENDING, from: undefined, to: undefined },
    ])
    expect(
      (await scopesOf('export_wallet_account', { address: TREASURY_COMPRESSED })).map((s) => s.account),
    ).toEqual([TREASURY_COMPRESSED, TREASURY])
  })

  it('every account of each key, for each payload of sign_raw_payloads', async () => {
    const scopes = await scopesOf('sign_raw_payloads', {
      signWith: TREASURY_COMPRESSED,
      payloads: ['aa', 'bb'],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    })
    expect(scopes.map((scope) => scope.account)).toEqual([
      TREASURY_COMPRESSED,
      TREASURY,
      TREASURY_COMPRESSED,
      TREASURY,
    ])
  })

  it("a private key named by another address: eth.tx.from is its key's 0x address", async () => {
    for (const from of [KEY_COMPRESSED, 'pk', KEY_ADDRESS.toUpperCase().replace('0X', '0x')])
      expect(
        await scopesOf('eth_send_transaction', { from, caip2: 'eip155:1', calls: [{ to: SPENDING }] }),
        from,
      ).toEqual([{ account: undefined, from: KEY_ADDRESS, to: SPENDING }])
  })

  it('a name that finds nothing is judged as given (the handler refuses it)', async () => {
    const unknown = `0x${'9'.repeat(40)}`
    expect(
      await scopesOf('eth_send_transaction', { from: unknown, caip2: 'eip155:1', calls: [{ to: SPENDING }] }),
    ).toEqual([{ account: undefined, from: unknown, to: SPENDING }])
  })
})

describe('the key held by another wallet, or by a private key', () => {
  let store: Store
  const accountIn = (walletId: string, id: string, addressFormat: string) => ({
    ...account(id, "m/44'/60'/0'/0/0", addressFormat, TREASURY_KEY),
    walletId,
  })
  beforeAll(async () => {
    store = await openMemoryStore()
    await store.transaction(async (tx) => {
      for (const [id, name] of [
        ['treasury', 'Treasury'],
        ['ops', 'Ops'],
      ])
        await tx.put('wallets', { ...row, id, name, exported: false, imported: true } as never)
      await tx.put('walletAccounts', accountIn('treasury', 'eth', 'ADDRESS_FORMAT_ETHEREUM') as never)
      await tx.put('walletAccounts', accountIn('ops', 'ops-eth', 'ADDRESS_FORMAT_ETHEREUM') as never)
      await tx.put('walletAccounts', accountIn('ops', 'ops-cmp', 'ADDRESS_FORMAT_COMPRESSED') as never)
      // The same key in another organization is none of this one's.
      await tx.put('walletAccounts', {
        ...accountIn('theirs', 'theirs-eth', 'ADDRESS_FORMAT_ETHEREUM'),
        organizationId: 'org-other',
      } as never)
      await tx.put('privateKeys', {
        ...row,
        id: 'same-secret',
        name: 'same secret',
        curve: 'CURVE_SECP256K1',
        publicKey: bytesToHex(TREASURY_KEY),
        addresses: [{ format: 'ADDRESS_FORMAT_ETHEREUM', address: TREASURY }],
        privateKeyTags: [],
        sealedPrivateKey: '',
        exported: false,
        imported: true,
      } as never)
    })
  })
  afterAll(() => store.close())

  const heldBy = async (intent: Record<string, unknown>) =>
    (
      await policyContextsOf(store, {
        id: 'activity',
        organizationId: ORG,
        path: 'export_wallet_account',
        type: ACTIVITIES.export_wallet_account.types[0]!,
        intent,
      })
    ).map((scope) => ({
      wallet: (scope.wallet as { id?: string; label?: string } | undefined)?.label,
      account: (scope.wallet_account as { address?: string } | undefined)?.address,
    }))

  it('every account of the organization holding the key, each with its own wallet, whichever is named', async () => {
    const every = [
      { wallet: 'Treasury', account: TREASURY },
      { wallet: 'Ops', account: TREASURY_COMPRESSED },
      { wallet: 'Ops', account: TREASURY },
    ]
    const sorted = (scopes: { wallet?: string; account?: string }[]) =>
      [...scopes].sort((a, b) => `${a.wallet}${a.account}`.localeCompare(`${b.wallet}${b.account}`))
    for (const address of [TREASURY, TREASURY_COMPRESSED, 'same-secret']) {
      const scopes = await heldBy({ address })
      expect(scopes, address).toHaveLength(3)
      expect(sorted(scopes), address).toEqual(sorted(every))
    }
    // The one named first.
    expect((await heldBy({ address: TREASURY_COMPRESSED }))[0]).toEqual({
      wallet: 'Ops',
      account: TREASURY_COMPRESSED,
    })
  })
})
