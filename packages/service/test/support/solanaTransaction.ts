// An unsigned Solana wire transaction for tests that only sign (nothing is broadcast): a fixed
// blockhash, so the same instructions make the same bytes.
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
export function solanaTransaction(feePayer: Address, instructions: Instruction[]): string {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' as Blockhash, lastValidBlockHeight: 0n },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
  )
  return bytesToHex(new Uint8Array(getTransactionEncoder().encode(compileTransaction(message))))
}
