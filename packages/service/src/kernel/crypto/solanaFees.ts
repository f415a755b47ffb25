// What a Solana transaction can cost its fee payer, read from the transaction itself: the
// spending limits count it for a signer who pays its own fee (limits/spendOf.ts), and sponsored
// sends bound the price a caller offers with the sponsor's lamports (sending/solSend.ts).
import { bytesToNumberLE } from '@noble/curves/utils.js'
import { hexToBytes } from '@noble/hashes/utils.js'

export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111'
/** Lamports each signature of a transaction costs its fee payer. */
export const LAMPORTS_PER_SIGNATURE = 5_000n
/** The most compute units a transaction may ask for (and what one that asks for none is counted at). */
export const MAX_COMPUTE_UNITS = 1_400_000n

/** An instruction's data (hex) as bytes; none when it is not hex, which no known shape matches. */
export const instructionBytes = (hex: string): Uint8Array =>
  /^(?:[0-9a-f]{2})*$/i.test(hex) ? hexToBytes(hex) : new Uint8Array()

/** What a transaction's Compute Budget instructions ask for. */
export interface ComputeBudget {
  /** `SetComputeUnitLimit`'s units (at most `MAX_COMPUTE_UNITS`); absent when it sets none. */
  units?: bigint
  /** `SetComputeUnitPrice`'s micro-lamports per compute unit: the priority fee's price (0 without one). */
  microLamports: bigint
}

/**
 * The Compute Budget a transaction asks for, or the index of a Compute Budget instruction this
 * cannot read: one other than RequestHeapFrame, SetComputeUnitLimit, SetComputeUnitPrice or
 * SetLoadedAccountsDataSizeLimit, or one of those with data of the wrong length. Such an
 * instruction could add a fee this does not see, so callers refuse it. `data` is hex.
 */
export function readComputeBudget(
  instructions: readonly { program_key: string; data: string }[],
): ComputeBudget | { unreadable: number } {
  let units: bigint | undefined
  let microLamports = 0n
  for (const [index, instruction] of instructions.entries()) {
    if (instruction.program_key !== COMPUTE_BUDGET_PROGRAM) continue
    const data = instructionBytes(instruction.data)
    const kind = data[0]
    if (kind === 2 && data.length === 5) {
      const asked = bytesToNumberLE(data.subarray(1, 5))
      units = asked > MAX_COMPUTE_UNITS ? MAX_COMPUTE_UNITS : asked
    } else if (kind === 3 && data.length === 9) microLamports = bytesToNumberLE(data.subarray(1, 9))
    else if (!((kind === 1 || kind === 4) && data.length === 5)) return { unreadable: index }
  }
  return units === undefined ? { microLamports } : { units, microLamports }
}

/**
 * The signature-verifying precompiles: the runtime charges the fee payer 5,000 lamports for each
 * signature one of their instructions verifies (its first data byte counts them), as for the
 * transaction's own.
 */
export const PRECOMPILE_PROGRAMS = new Set([
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
])

/** The signatures the precompile instructions among `instructions` (data as bytes) verify. */
export function precompileSignatures(instructions: readonly { program: string; data: Uint8Array }[]): number {
  let count = 0
  for (const { program, data } of instructions) if (PRECOMPILE_PROGRAMS.has(program)) count += data[0] ?? 0
  return count
}

/**
 * The most a transaction of `signers` signatures and `budget` costs its fee payer, lamports: 5,000
 * for each signature, its own and those its precompile instructions verify (`instructions`, data
 * as hex), and the priority fee (micro-lamports per compute unit times the units it asks for,
 * rounded up; without `SetComputeUnitLimit`, the most a transaction may use).
 */
export function solanaFeeBound(
  signers: number,
  budget: ComputeBudget,
  instructions: readonly { program_key: string; data: string }[],
): bigint {
  const priority = (budget.microLamports * (budget.units ?? MAX_COMPUTE_UNITS) + 999_999n) / 1_000_000n
  const verified = precompileSignatures(
    instructions.map((instruction) => ({
      program: instruction.program_key,
      data: instructionBytes(instruction.data),
    })),
  )
  return BigInt(signers + verified) * LAMPORTS_PER_SIGNATURE + priority
}
