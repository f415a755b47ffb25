import { ed25519 } from '@noble/curves/ed25519.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { getAddressDecoder } from '@solana/addresses'
import {
  type Address,
  appendTransactionMessageInstruction,
  type Blockhash,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  verifySignature,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { type Hex, parseTransaction, recoverTransactionAddress, serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  decodeTransactionForPolicy,
  signAndDescribeTransaction,
  signTransaction,
} from '../kernel/crypto/signTransaction.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf, SOLANA_ACCOUNT } from '../testing/harness.ts'

const DEAD = '0x000000000000000000000000000000000000dEaD'
const BLOCKHASH = 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' as Blockhash

async function wallet(h: Awaited<ReturnType<typeof createHarness>>) {
  h.clock.advance(1)
  const { addresses } = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: 'Tx', accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT] }),
  )
  return { eth: addresses[0] as string, sol: addresses[1] as Address }
}

const UNSIGNED: Record<string, Parameters<typeof serializeTransaction>[0]> = {
  legacy: { type: 'legacy', chainId: 31337, nonce: 3, gasPrice: 10n ** 9n, gas: 21000n, to: DEAD, value: 7n },
  eip2930: {
    type: 'eip2930',
    chainId: 31337,
    nonce: 3,
    gasPrice: 10n ** 9n,
    gas: 30000n,
    to: DEAD,
    value: 7n,
    accessList: [{ address: DEAD, storageKeys: [`0x${'11'.repeat(32)}`] }],
  },
  eip1559: {
    type: 'eip1559',
    chainId: 1,
    nonce: 0,
    maxFeePerGas: 3n * 10n ** 10n,
    maxPriorityFeePerGas: 10n ** 9n,
    gas: 60000n,
    to: DEAD,
    value: 10n ** 18n,
    data: '0xa9059cbb',
  },
  eip7702: {
    type: 'eip7702',
    chainId: 31337,
    nonce: 1,
    maxFeePerGas: 10n ** 9n,
    maxPriorityFeePerGas: 1n,
    gas: 100000n,
    to: DEAD,
    value: 0n,
    authorizationList: [{ chainId: 31337, address: DEAD, nonce: 2, r: '0x01', s: '0x02', yParity: 0 }],
  },
}

/** A System Program transfer from `from` to `to`, paid by `payer`, as a wire transaction in hex. */
function solanaTransfer(
  from: Address,
  to: Address,
  {
    version = 0,
    lamports = 5000n,
    payer = from,
  }: { version?: 'legacy' | 0; lamports?: bigint; payer?: Address } = {},
): string {
  const message = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayer(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 1n }, m),
    (m) =>
      appendTransactionMessageInstruction(
        getTransferSolInstruction({ source: createNoopSigner(from), destination: to, amount: lamports }),
        m,
      ),
  )
  return Buffer.from(getTransactionEncoder().encode(compileTransaction(message))).toString('hex')
}

describe('sign_transaction', () => {
  it('signs every Ethereum type as the signWith account and records the activity', async () => {
    const h = await createHarness()
    const { eth } = await wallet(h)
    let lastId = ''
    for (const [name, tx] of Object.entries(UNSIGNED)) {
      const unsigned = serializeTransaction(tx)
      h.clock.advance(1)
      const reply = await h.submit('sign_transaction', {
        signWith: eth.toLowerCase(),
        type: 'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransaction: name === 'legacy' ? unsigned : unsigned.slice(2),
      })
      expect(reply.body.activity).toMatchObject({
        type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
        status: 'ACTIVITY_STATUS_COMPLETED',
        intent: {
          signTransactionIntentV2: { signWith: eth.toLowerCase(), type: 'TRANSACTION_TYPE_ETHEREUM' },
        },
      })
      lastId = reply.body.activity.id
      const { signedTransaction } = resultOf('sign_transaction', reply)
      expect(signedTransaction).toMatch(/^[0-9a-f]+$/)
      const signed = `0x${signedTransaction}` as Hex
      expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(eth)
      // Only the signature was added.
      const { r: _r, s: _s, v: _v, yParity: _y, ...fields } = parseTransaction(signed)
      expect(serializeTransaction(fields as never)).toBe(unsigned)
    }
    const recorded = await h.query('get_activity', { activityId: lastId })
    expect(recorded.body.activity).toMatchObject({
      id: lastId,
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      result: { signTransactionResult: { signedTransaction: expect.any(String) } },
    })
  })

  it('fills the signer slot of legacy and v0 Solana transactions; other signers keep theirs', async () => {
    const h = await createHarness()
    const { sol } = await wallet(h)
    const other = (await wallet(h)).sol
    for (const version of ['legacy', 0] as const) {
      const unsigned = solanaTransfer(sol, other, { version })
      h.clock.advance(1)
      const { signedTransaction } = resultOf(
        'sign_transaction',
        await h.submit('sign_transaction', {
          signWith: sol,
          type: 'TRANSACTION_TYPE_SOLANA',
          unsignedTransaction: unsigned,
        }),
      )
      const tx = getTransactionDecoder().decode(Buffer.from(signedTransaction, 'hex'))
      const signature = tx.signatures[sol]
      expect(signature).toBeTruthy()
      const key = await getPublicKeyFromAddress(sol)
      expect(await verifySignature(key, signature as never, tx.messageBytes)).toBe(true)
      expect(getBase64EncodedWireTransaction(tx)).toBeTruthy()
    }
    // A transfer from `other`, paid by `sol`: `other` signs its slot, `sol`'s stays empty.
    const twoSigners = solanaTransfer(other, sol, { lamports: 1n, payer: sol })
    h.clock.advance(1)
    const { signedTransaction } = resultOf(
      'sign_transaction',
      await h.submit('sign_transaction', {
        signWith: other,
        type: 'TRANSACTION_TYPE_SOLANA',
        unsignedTransaction: twoSigners,
      }),
    )
    const tx = getTransactionDecoder().decode(Buffer.from(signedTransaction, 'hex'))
    expect(tx.signatures[sol]).toBeNull()
    expect(tx.signatures[other]).toBeTruthy()
  })

  it('answers 400 FIELD_INVALID naming the field for bad bytes, a wrong type or a non-signer', async () => {
    const h = await createHarness()
    const { eth, sol } = await wallet(h)
    const stranger = (await wallet(h)).sol
    const cases: [Record<string, unknown>, string][] = [
      [
        { signWith: eth, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: 'zz' },
        'unsignedTransaction',
      ],
      [
        { signWith: eth, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: '0x02c0ffee' },
        'unsignedTransaction',
      ],
      [
        {
          signWith: eth,
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction: serializeTransaction({ ...UNSIGNED.legacy, chainId: undefined } as never),
        },
        'unsignedTransaction',
      ],
      [
        {
          signWith: sol,
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction: serializeTransaction(UNSIGNED.eip1559 as never),
        },
        'signWith',
      ],
      [
        { signWith: sol, type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: 'deadbeef' },
        'unsignedTransaction',
      ],
      [
        {
          signWith: stranger,
          type: 'TRANSACTION_TYPE_SOLANA',
          unsignedTransaction: solanaTransfer(sol, DEAD_SOL),
        },
        'signWith',
      ],
    ]
    for (const [parameters, field] of cases) {
      h.clock.advance(1)
      const reply = await h.submit('sign_transaction', parameters)
      expect(reply.status, JSON.stringify(reply.body)).toBe(400)
      expect(reply.body.details).toMatchObject({ errorCode: 'FIELD_INVALID', field: `parameters.${field}` })
    }
    const badType = await h.submit('sign_transaction', {
      signWith: eth,
      type: 'TRANSACTION_TYPE_BITCOIN',
      unsignedTransaction: '00',
    })
    expect(badType).toMatchObject({ status: 400, body: { details: { field: 'parameters.type' } } })
    // An address outside the organization is not found, as for sign_raw_payloads.
    const missing = await h.submit('sign_transaction', {
      signWith: DEAD,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: serializeTransaction(UNSIGNED.eip1559 as never),
    })
    expect(missing.body.details).toMatchObject({ field: 'parameters.signWith' })
  })
})

const DEAD_SOL = 'DeadDeadDeadDeadDeadDeadDeadDeadDeadDeadDead' as Address

describe('a Solana transaction is signed only when its message is exactly one', () => {
  const privateKey = ed25519.utils.randomSecretKey()
  const sol = getAddressDecoder().decode(ed25519.getPublicKey(privateKey))
  const sign = (unsignedTransaction: string) =>
    signTransaction({ type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction, privateKey })
  /** A wire transaction: one empty signature slot, then `message` as given. */
  const wire = (message: Uint8Array) =>
    Buffer.concat([Buffer.from([1]), Buffer.alloc(64), message]).toString('hex')

  it('refuses bytes past the message, and a header naming more signers than accounts; signs the message as it is', () => {
    const transfer = solanaTransfer(sol, DEAD_SOL, { version: 'legacy' })
    expect(sign(transfer)).toMatch(/^[0-9a-f]+$/)
    const message = getTransactionDecoder().decode(Buffer.from(transfer, 'hex'))
      .messageBytes as unknown as Uint8Array
    // What other bytes (an Aptos fee-payer transaction of the same key) pass for a message by.
    expect(() => sign(wire(Buffer.concat([message, Buffer.from('trailing bytes')])))).toThrow(
      /not exactly a Solana message/,
    )
    // 3 signers named, 1 account: the key, a blockhash, no instructions.
    const short = Buffer.concat([
      Buffer.from([3, 0, 0, 1]),
      ed25519.getPublicKey(privateKey),
      Buffer.alloc(32, 1),
      Buffer.from([0]),
    ])
    expect(() => sign(wire(short))).toThrow(/not a Solana wire transaction/)
  })
})

describe('decodeTransactionForPolicy', () => {
  it('reads an EIP-7702 transaction with decimal strings', () => {
    const decoded = decodeTransactionForPolicy(
      'TRANSACTION_TYPE_ETHEREUM',
      serializeTransaction(UNSIGNED.eip7702 as never),
      { from: DEAD },
    )
    expect(decoded).toEqual({
      eth: {
        tx: {
          type: 'eip7702',
          from: DEAD.toLowerCase(),
          to: DEAD.toLowerCase(),
          value: '0',
          data: '0x',
          chain_id: '31337',
          nonce: '1',
          gas: '100000',
          max_fee_per_gas: '1000000000',
          max_priority_fee_per_gas: '1',
          access_list: [],
          authorization_list: [{ chain_id: '31337', address: DEAD.toLowerCase(), nonce: '2' }],
        },
      },
    })
    const legacy = decodeTransactionForPolicy(
      'TRANSACTION_TYPE_ETHEREUM',
      serializeTransaction(UNSIGNED.legacy as never),
    )
    expect(legacy).toMatchObject({ eth: { tx: { type: 'legacy', gas_price: '1000000000', value: '7' } } })
  })

  it('reads a Solana transfer', () => {
    const from = 'So11111111111111111111111111111111111111112' as Address
    const decoded = decodeTransactionForPolicy(
      'TRANSACTION_TYPE_SOLANA',
      solanaTransfer(from, DEAD_SOL, { lamports: 42n }),
    )
    expect(decoded).toMatchObject({
      solana: {
        tx: {
          version: 0,
          signers: [from],
          program_keys: ['11111111111111111111111111111111'],
          transfers: [{ from, to: DEAD_SOL, amount: '42' }],
          recent_blockhash: BLOCKHASH,
        },
      },
    })
  })
  it('signAndDescribeTransaction signs as signTransaction and decodes as decodeTransactionForPolicy, from one decoding', () => {
    const ethKey = secp256k1.utils.randomSecretKey()
    for (const unsigned of Object.values(UNSIGNED)) {
      const input = {
        type: 'TRANSACTION_TYPE_ETHEREUM' as const,
        unsignedTransaction: serializeTransaction(unsigned as never),
        privateKey: ethKey,
      }
      expect(signAndDescribeTransaction(input)).toEqual({
        signedTransaction: signTransaction(input),
        policy: decodeTransactionForPolicy(input.type, input.unsignedTransaction),
      })
    }
    const solKey = ed25519.utils.randomSecretKey()
    const from = getAddressDecoder().decode(ed25519.getPublicKey(solKey))
    for (const version of ['legacy', 0] as const) {
      const input = {
        type: 'TRANSACTION_TYPE_SOLANA' as const,
        unsignedTransaction: solanaTransfer(from, DEAD_SOL, { version }),
        privateKey: solKey,
      }
      expect(signAndDescribeTransaction(input)).toEqual({
        signedTransaction: signTransaction(input),
        policy: decodeTransactionForPolicy(input.type, input.unsignedTransaction),
      })
    }
  })
})
