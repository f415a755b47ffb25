// One key under another address format is the same signer. create_wallet_accounts allows a
// wallet's `curve|path` again with another `addressFormat` (the same private key), and
// sign_transaction checks only the curve: a Solana transaction signed through a SUI-format alias,
// or an Ethereum one through a COMPRESSED-format alias, is the same account's on chain. The limits
// read such a transaction as the chain sees its signer, and a wallet account's limit covers every
// address of its key; before, both went through uncounted.
import { type Address, createNoopSigner } from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { encodeAbiParameters, type Hex, serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  resultOf,
  SOLANA_ACCOUNT,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'
import { DEAD_ADDRESS as DEAD, unsignedTransfer } from '../../src/testing/unsignedTransfer.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'

const DEAD_SOL = 'GDDMwNyyx8uB6zrqwBFHjLLG3TBYk2F8Az4yrQC5RzMp' as Address
const ONE_SOL = 10n ** 9n
let nonce = 0

const refusal = (reply: { status: number; body: Json }) => ({
  status: reply.status,
  errorCode: reply.body?.details?.errorCode,
})

async function setup() {
  const h = await createHarness()
  const sub = await h.createSubOrganization({
    wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT] },
  })
  const owner = sub.keys[0]!
  const submit = (path: Parameters<Harness['submit']>[0], parameters: Json, by: TestKey = owner) => {
    h.clock.advance(1)
    return h.submit(path, parameters, { as: by, organizationId: sub.organizationId })
  }
  const alias = async (account: Json, by: TestKey = owner) =>
    resultOf(
      'create_wallet_accounts',
      await submit('create_wallet_accounts', { walletId: sub.walletId, accounts: [account] }, by),
    ).addresses[0] as string
  const limit = (address: string, caip2: string, amount: string) =>
    submit('latchkey_create_spending_limit', {
      spendingLimitName: 'account',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2 },
      amount,
    })
  return { h, sub, owner, submit, alias, limit, eth: sub.addresses![0]!, sol: sub.addresses![1]! as Address }
}

/** A raw payload (ed25519 signs it as it is; secp256k1, as the 32-byte hash it is). */
const raw = (submit: Awaited<ReturnType<typeof setup>>['submit'], signWith: string, ed25519 = false) =>
  submit('sign_raw_payload', {
    signWith,
    payload: `0x${'11'.repeat(32)}`,
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: ed25519 ? 'HASH_FUNCTION_NOT_APPLICABLE' : 'HASH_FUNCTION_NO_OP',
  })

describe('a key under another address format', () => {
  it('counts a Solana transfer signed through a SUI-format alias under a session profile’s limit', async () => {
    const { submit, alias, sol } = await setup()
    const profileId = resultOf(
      'create_session_profile',
      await submit('create_session_profile', {
        sessionProfileName: 'bot',
        scope: "activity.resource == 'WALLET' && activity.action != 'DELETE'",
      }),
    ).sessionProfileId
    resultOf(
      'latchkey_create_spending_limit',
      await submit('latchkey_create_spending_limit', {
        spendingLimitName: 'profile SOL',
        scope: { type: 'SPENDING_LIMIT_SCOPE_SESSION_PROFILE', sessionProfileId: profileId },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'solana:mainnet' },
        amount: '10000',
      }),
    )
    const session = testKey()
    resultOf(
      'stamp_login',
      await submit('stamp_login', { publicKey: session.publicKey, sessionProfileId: profileId }),
    )
    const oneSol = solanaTransaction(sol, [
      getTransferSolInstruction({ source: createNoopSigner(sol), destination: DEAD_SOL, amount: ONE_SOL }),
    ])
    const sign = (signWith: string) =>
      submit(
        'sign_transaction',
        { signWith, type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: oneSol },
        session,
      )
    expect(refusal(await sign(sol))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    const sui = await alias({ ...SOLANA_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_SUI' }, session)
    const refused = await sign(sui)
    expect(refusal(refused)).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    expect(refused.body.message).toContain(`this signature spends ${ONE_SOL + 5000n}`)
  })

  it('covers every address of a Solana account’s key with the account’s limit', async () => {
    const { alias, limit, submit, sol } = await setup()
    const aptos = await alias({ ...SOLANA_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_APTOS' })
    expect((await limit(sol, 'solana:mainnet', '10000')).status).toBe(200)
    const oneSol = solanaTransaction(sol, [
      getTransferSolInstruction({ source: createNoopSigner(sol), destination: DEAD_SOL, amount: ONE_SOL }),
    ])
    const sign = (signWith: string) =>
      submit('sign_transaction', { signWith, type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: oneSol })
    expect(refusal(await sign(aptos))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    expect(refusal(await raw(submit, aptos, true))).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    // A limit made on an alias covers the account itself, and one of another key does not.
    const { alias: alias2, limit: limit2, submit: submit2, sol: sol2 } = await setup()
    const xlm = await alias2({ ...SOLANA_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_XLM' })
    expect((await limit2(xlm, 'solana:mainnet', '10000')).status).toBe(200)
    const other = await alias2({ ...SOLANA_ACCOUNT, path: "m/44'/501'/1'/0'" })
    expect(refusal(await raw(submit2, sol2, true))).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect((await raw(submit2, other, true)).status).toBe(200)
  })

  it('covers a COMPRESSED-format alias of an Ethereum account with the account’s limit, both ways', async () => {
    const { alias, limit, submit, eth } = await setup()
    expect((await limit(eth, 'eip155:1', '10')).status).toBe(200)
    const compressed = await alias({ ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_COMPRESSED' })
    const tron = await alias({ ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_TRON' })
    const big = unsignedTransfer({ to: DEAD, value: 10n ** 18n, nonce: nonce++, maxFeePerGas: 0n })
    for (const signWith of [compressed, tron]) {
      const signed = await submit('sign_transaction', {
        signWith,
        type: 'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransaction: big,
      })
      expect(refusal(signed)).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
      expect(refusal(await raw(submit, signWith))).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    }
    // Within the limit, through the alias: signed and counted.
    const small = unsignedTransfer({ to: DEAD, value: 4n, nonce: nonce++, maxFeePerGas: 0n })
    const fits = await submit('sign_transaction', {
      signWith: compressed,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: small,
    })
    expect(fits.status).toBe(200)
    const seven = unsignedTransfer({ to: DEAD, value: 7n, nonce: nonce++, maxFeePerGas: 0n })
    const over = await submit('sign_transaction', {
      signWith: eth,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: seven,
    })
    expect(refusal(over)).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })

    // A limit made on the alias covers the 0x account.
    const second = await setup()
    const alias2 = await second.alias({ ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_UNCOMPRESSED' })
    expect((await second.limit(alias2, 'eip155:1', '10')).status).toBe(200)
    expect(refusal(await raw(second.submit, second.eth))).toEqual({
      status: 403,
      errorCode: 'SPEND_UNDECODABLE',
    })
  })

  it('reads a transaction signed through an alias as its 0x account’s: a call to itself with calldata is refused', async () => {
    const { alias, limit, submit, eth } = await setup()
    expect((await limit(eth, 'eip155:1', '10')).status).toBe(200)
    const compressed = await alias({ ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_COMPRESSED' })
    const execute = `0xe9ae5c53${encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'bytes' }],
      [`0x01${'00'.repeat(31)}`, '0x'],
    ).slice(2)}` as Hex
    const selfCall = serializeTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: nonce++,
      gas: 100_000n,
      maxFeePerGas: 0n,
      maxPriorityFeePerGas: 0n,
      to: eth as Hex,
      value: 0n,
      data: execute,
    })
    const refused = await submit('sign_transaction', {
      signWith: compressed,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: selfCall,
    })
    expect(refusal(refused)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(refused.body.message).toContain('calls the signing account itself')
  })
})
