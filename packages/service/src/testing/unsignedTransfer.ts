import { Transaction } from 'micro-eth-signer'

/** The address the tests and benches pay by default (nobody holds its key). */
export const DEAD_ADDRESS = '0x000000000000000000000000000000000000dead'

const GWEI_2 = 2n * 10n ** 9n
const min = (a: bigint, b: bigint) => (a < b ? a : b)

export interface UnsignedTransferOptions {
  /** Wei sent. */
  value: bigint
  /** A distinct nonce per request keeps two bodies apart (no replays). */
  nonce: number | bigint
  /** @default DEAD_ADDRESS */
  to?: string | undefined
  /** @default 1 */
  chainId?: number | bigint | undefined
  /** @default 21000 */
  gas?: bigint | undefined
  /** Calldata (an ERC-20 transfer, say); none by default. */
  data?: string | undefined
  /**
   * Its fee cap, wei per gas (the tip is 1 gwei or this, the lower). 0: a transaction that pays no
   * fee, so a native spending limit counts its value alone. @default 2 gwei
   */
  maxFeePerGas?: bigint | undefined
}

/**
 * An unsigned EIP-1559 transaction as `sign_transaction` takes it (`0x02…`, hex): `value` wei to
 * `to` with a 2 gwei fee cap and a 1 gwei tip (or the fee cap `maxFeePerGas`). The spending-limit tests and `bench:service` sign
 * these (1 wei each, a fresh nonce each) under and without limits. The same bytes as viem's
 * `serializeTransaction` of those fields, made with micro-eth-signer (the service's own dependency).
 */
export function unsignedTransfer(options: UnsignedTransferOptions): `0x${string}` {
  const transaction = new Transaction(
    'eip1559',
    {
      chainId: BigInt(options.chainId ?? 1),
      nonce: BigInt(options.nonce),
      maxPriorityFeePerGas: min(10n ** 9n, options.maxFeePerGas ?? GWEI_2),
      maxFeePerGas: options.maxFeePerGas ?? GWEI_2,
      gasLimit: options.gas ?? 21_000n,
      to: (options.to ?? DEAD_ADDRESS).toLowerCase(),
      value: options.value,
      data: options.data ?? '0x',
      accessList: [],
    },
    // Fixtures, not user input: no safety limits on the values a test picks.
    { strict: false },
  )
  return transaction.toHex({ includeSignature: false }) as `0x${string}`
}
