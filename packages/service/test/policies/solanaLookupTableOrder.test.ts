// A v0 message's accounts loaded from address lookup tables follow its static keys in the order the
// runtime loads them: every table's writable entries, table by table, then every table's read-only
// ones. `solana.tx` once listed them table by table (A's writable, A's read-only, B's writable, …),
// so with two tables an instruction's account was labelled as another table's entry.
import { bytesToHex } from '@noble/hashes/utils.js'
import {
  AccountRole,
  type Address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  decompileTransactionMessage,
  generateKeyPairSigner,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit'
import { describe, expect, it } from 'vitest'
import { decodeTransactionForPolicy } from '../../src/kernel/crypto/signTransaction.ts'

const MEMO = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address

describe('solana.tx accounts loaded from lookup tables', () => {
  it('labels each one with the table entry the runtime loads', async () => {
    const address = async () => (await generateKeyPairSigner()).address
    const payer = await address()
    const [tableA, tableB] = [await address(), await address()]
    const a = [await address(), await address()]
    const b = [await address(), await address()]
    const tables = { [tableA]: a, [tableB]: b }
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(payer, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          {
            blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' as Blockhash,
            lastValidBlockHeight: 0n,
          },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          [
            {
              programAddress: MEMO,
              accounts: [
                { address: a[0]!, role: AccountRole.WRITABLE },
                { address: a[1]!, role: AccountRole.READONLY },
                { address: b[0]!, role: AccountRole.WRITABLE },
                { address: b[1]!, role: AccountRole.READONLY },
              ],
              data: new Uint8Array([0x68]),
            },
          ],
          m,
        ),
      (m) => compressTransactionMessageUsingAddressLookupTables(m, tables),
    )
    const wire = getTransactionEncoder().encode(compileTransaction(message))
    const compiled = getCompiledTransactionMessageDecoder().decode(
      getTransactionDecoder().decode(wire).messageBytes,
    )
    const lookups = (compiled as { addressTableLookups?: { lookupTableAddress: string }[] })
      .addressTableLookups
    expect(lookups).toHaveLength(2)
    // The message lists the tables in an order of its own; each gives one writable, one read-only.
    const [first, second] = lookups!.map((lookup) => lookup.lookupTableAddress)
    // What the chain loads: @solana/kit's decompiler, given the tables' contents.
    const loaded = decompileTransactionMessage(compiled as never, { addressesByLookupTableAddress: tables })
    const truth = loaded.instructions[0]!.accounts!.map((account) => account.address)
    expect(truth).toEqual([a[0], a[1], b[0], b[1]])

    const decoded = decodeTransactionForPolicy('TRANSACTION_TYPE_SOLANA', bytesToHex(new Uint8Array(wire)))
    if (!('solana' in decoded)) throw new Error('not a Solana transaction')
    const { tx } = decoded.solana
    expect(tx.instructions[0]!.accounts).toEqual([`${tableA}#0`, `${tableA}#1`, `${tableB}#0`, `${tableB}#1`])
    const resolve = (label: string) => {
      const [table, index] = label.split('#')
      return tables[table!]![Number(index)]
    }
    expect(tx.instructions[0]!.accounts.map(resolve)).toEqual(truth)
    // The static keys (payer, program), then both writable entries, then both read-only ones.
    expect(tx.account_keys.slice(2)).toEqual([`${first}#0`, `${second}#0`, `${first}#1`, `${second}#1`])
  })
})
