// An unsigned Solana wire transaction for tests: by default on a fixed blockhash (tests that only
// sign: the same instructions make the same bytes), or on the one given (a node's latest, for a
// transaction that is broadcast).
import { bytesToHex } from '@noble/hashes/utils.js'
import {
  type Address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createTransactionMessage,
  getTransactionEncoder,
  type Instruction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit'

/** An unsigned v0 Solana transaction (hex, as `sign_transaction` takes it) paid by `feePayer`. */
export function solanaTransaction(
  feePayer: Address | string,
  instructions: Instruction[],
  blockhash = 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N',
): string {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer as Address, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: blockhash as Blockhash, lastValidBlockHeight: 0n },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
  )
  return bytesToHex(new Uint8Array(getTransactionEncoder().encode(compileTransaction(message))))
}

/** Sends a signed transaction (hex) to the Solana node at `url` (`sendTransaction`): its JSON-RPC answer. */
export async function broadcastSolana(url: string, signedHex: string): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'sendTransaction',
      params: [Buffer.from(signedHex, 'hex').toString('base64'), { encoding: 'base64' }],
    }),
  })
  return response.json()
}
