import { bytesToHex } from '@noble/hashes/utils.js'
import { getAddress, serializeTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeTransactionForPolicy } from '../kernel/crypto/signTransaction.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import type { Reads, Store } from '../kernel/store/Store.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf, testKey } from '../testing/harness.ts'
import { canonicalAddress } from './canonicalAddress.ts'
import { evaluatePolicies } from './evaluatePolicies.ts'
import { type PolicyActivity, policyContextOf } from './policyContextOf.ts'

/** The same address as the service shows it (EIP-55) and as the engine used to hold it. */
const TO = getAddress('0x6769f3b0aa3d5c2e1e7a5dcb5c9a6e1f5c7d8e9f')
const FROM = getAddress('0x52908400098527886e0f7030069857d2e4169ee7')
const SOLANA = 'DRpbCBMxVnDK7maPM5tGv6MvB3v1sRMC86PZ8okm21hy'

/** A context's outcome under one DENY policy and an ALLOW policy for everything. */
async function decide(reads: Reads, activity: PolicyActivity, deny: string) {
  const context = await policyContextOf(reads, activity, {
    decodeTransaction: decodeTransactionForPolicy as never,
  })
  return evaluatePolicies({
    policies: [
      { id: 'allow', effect: 'EFFECT_ALLOW', condition: 'true' },
      { id: 'deny', effect: 'EFFECT_DENY', condition: deny },
    ],
    context,
    consensus: { approvers: [{ id: 'u1', tags: [], email: '', alias: 'a' }], credentials: [] },
    rootQuorumMet: false,
  }).outcome
}

const activity = (path: string, intent: Record<string, unknown>): PolicyActivity => ({
  id: 'a1',
  organizationId: 'org',
  path,
  type: 'ACTIVITY_TYPE_X',
  intent,
})

const ethTransaction = (to: string) =>
  activity('sign_transaction', {
    signWith: FROM,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: serializeTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: 0,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
      gas: 21000n,
      to: to as `0x${string}`,
      value: 1n,
    }),
  })

const rawPayload = (encoding: string, payload: unknown) =>
  activity('sign_raw_payloads', {
    signWith: FROM,
    payloads: [JSON.stringify(payload)],
    encoding,
    hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
  })

const permit = {
  types: {
    EIP712Domain: [{ name: 'verifyingContract', type: 'address' }],
    Permit: [
      { name: 'spender', type: 'address' },
      { name: 'holders', type: 'address[]' },
    ],
  },
  primaryType: 'Permit',
  domain: { verifyingContract: TO.toLowerCase() },
  message: { spender: TO.toLowerCase(), holders: [FROM.toLowerCase()] },
}

/** A seeded generator, so a failing case can be rerun. */
function random(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `address` with each hex letter's case picked at random. */
const anyCase = (address: string, next: () => number) =>
  `0x${[...address.slice(2)].map((c) => (next() < 0.5 ? c.toLowerCase() : c.toUpperCase())).join('')}`

describe('addresses in policies', () => {
  let store: Store
  beforeAll(async () => {
    store = await openMemoryStore()
  })
  afterAll(() => store.close())

  it('holds EVM addresses in lowercase and every other address as it is', () => {
    expect(canonicalAddress(TO)).toBe(TO.toLowerCase())
    expect(canonicalAddress(`0X${TO.slice(2)}`)).toBe(TO.toLowerCase())
    expect(canonicalAddress(SOLANA)).toBe(SOLANA)
    expect(canonicalAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq')).toBe(
      'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    )
    // Not an address: 0x and 39 or 41 digits, or no 0x.
    expect(canonicalAddress(TO.slice(0, -1))).toBe(TO.slice(0, -1))
    expect(canonicalAddress(`${TO}A`)).toBe(`${TO}A`)
    expect(canonicalAddress(TO.slice(2))).toBe(TO.slice(2))
  })

  it('applies a DENY naming eth.tx.to or eth.tx.from checksummed', async () => {
    expect(await decide(store, ethTransaction(TO), `eth.tx.to == '${TO}'`)).toBe('OUTCOME_DENY_EXPLICIT')
    expect(await decide(store, ethTransaction(TO), `eth.tx.from == '${FROM}'`)).toBe('OUTCOME_DENY_EXPLICIT')
    expect(await decide(store, ethTransaction(TO), `eth.tx.to in ['${FROM}', '${TO}']`)).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
    expect(
      await decide(store, ethTransaction(TO), `activity.params.signWith == '${FROM.toLowerCase()}'`),
    ).toBe('OUTCOME_DENY_EXPLICIT')
    expect(await decide(store, ethTransaction(FROM), `eth.tx.to == '${TO}'`)).toBe('OUTCOME_ALLOW')
  })

  it('applies a DENY naming an EIP-712 address field checksummed', async () => {
    const payload = rawPayload('PAYLOAD_ENCODING_EIP712', permit)
    expect(await decide(store, payload, `eth.eip_712.message.spender == '${TO}'`)).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
    expect(await decide(store, payload, `eth.eip_712.domain.verifying_contract == '${TO}'`)).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
    expect(await decide(store, payload, `eth.eip_712.message.holders.contains('${FROM}')`)).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
  })

  it('applies a DENY naming a 7702 authorization address checksummed', async () => {
    const payload = rawPayload('PAYLOAD_ENCODING_EIP7702_AUTHORIZATION', {
      chainId: 1,
      address: TO.toLowerCase(),
      nonce: 0,
    })
    expect(await decide(store, payload, `eth.eip_7702_authorization.address == '${TO}'`)).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
  })

  it('compares Solana addresses exactly', async () => {
    const transfer = activity('sign_raw_payloads', { signWith: SOLANA, payloads: [] })
    expect(await decide(store, transfer, `activity.params.signWith == '${SOLANA}'`)).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
    expect(await decide(store, transfer, `activity.params.signWith == '${SOLANA.toLowerCase()}'`)).toBe(
      'OUTCOME_ALLOW',
    )
  })

  it('applies a DENY on wallet_account.address written as the service shows it, through HTTP', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
    })
    const asRoot = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const address = sub.addresses![0]!
    expect(address).toBe(getAddress(address))
    expect(address).not.toBe(address.toLowerCase())
    // A non-root back end that may sign, except with this account.
    const backend = testKey()
    resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'backend',
              apiKeys: [backend.apiKey()],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        asRoot,
      ),
    )
    const policy = (policyName: string, effect: string, condition: string) =>
      h.submit('create_policy', { policyName, effect, condition, notes: '' }, asRoot)
    resultOf('create_policy', await policy('Back end signs', 'EFFECT_ALLOW', "activity.action == 'SIGN'"))
    resultOf(
      'create_policy',
      await policy('Not the treasury', 'EFFECT_DENY', `wallet_account.address == '${address}'`),
    )
    const signed = await h.submit(
      'sign_raw_payloads',
      {
        signWith: address,
        payloads: ['ab'.repeat(32)],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      { as: backend, organizationId: sub.organizationId },
    )
    expect(signed).toMatchObject({
      status: 403,
      body: { details: { errorCode: 'PERMISSION_DENIED', outcome: 'OUTCOME_DENY_EXPLICIT' } },
    })
  })

  it('applies a DENY for random accounts and random casing of the literal and of the request', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({
      wallet: {
        walletName: 'Main',
        accounts: Array.from({ length: 8 }, (_, i) => ({ ...ETHEREUM_ACCOUNT, path: `m/44'/60'/0'/0/${i}` })),
      },
    })
    const accounts = sub.addresses!
    expect(new Set(accounts).size).toBe(8)
    const next = random(0x5eed)
    for (let i = 0; i < 200; i++) {
      const account = accounts[Math.floor(next() * accounts.length)]!
      const to = getAddress(
        `0x${bytesToHex(Uint8Array.from({ length: 20 }, () => Math.floor(next() * 256)))}`,
      )
      const request = ethTransaction(to)
      request.organizationId = sub.organizationId
      request.intent.signWith = anyCase(account, next)
      const deny =
        next() < 0.5
          ? `wallet_account.address == '${anyCase(account, next)}'`
          : `eth.tx.to == '${anyCase(to, next)}'`
      expect({ i, deny, outcome: await decide(h.service.store, request, deny) }).toEqual({
        i,
        deny,
        outcome: 'OUTCOME_DENY_EXPLICIT',
      })
    }
  })
})
