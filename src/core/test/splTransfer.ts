import { bytesToHex } from '@noble/hashes/utils.js'
import {
  type Address,
  appendTransactionMessageInstruction,
  type Blockhash,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit'
import {
  findAssociatedTokenPda,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token'

/** USDC's mint on Solana's mainnet. */
export const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' as Address

/**
 * An unsigned Solana transaction (hex, as `signTransaction` takes it) in which `from` pays `amount`
 * base units of `mint` (6 decimals) to `to`: one `TransferChecked` between their associated
 * token accounts, `from` paying the fee. What a limit on the token counts.
 */
export async function unsignedSplTransfer(options: {
  from: Address
  to: Address
  amount: bigint
  mint?: Address
}): Promise<string> {
  const mint = options.mint ?? USDC_MINT
  const account = async (owner: Address) =>
    (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0]
  const instruction = getTransferCheckedInstruction({
    source: await account(options.from),
    mint,
    destination: await account(options.to),
    authority: createNoopSigner(options.from),
    amount: options.amount,
    decimals: 6,
  })
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(options.from, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N' as Blockhash, lastValidBlockHeight: 0n },
        m,
      ),
    (m) => appendTransactionMessageInstruction(instruction, m),
  )
  return bytesToHex(new Uint8Array(getTransactionEncoder().encode(compileTransaction(message))))
}
