// One end user's Ethereum account, as the tests of what a limit counts use it: limits set on it by
// its own user (a daily rolling window of 10 units), its `sign_transaction`s (200, or the
// refusal's status, code and message), and what each of its limits has used, in their order.
import { type Hex, serializeTransaction } from 'viem'
import { createHarness, ETHEREUM_ACCOUNT, type Json, resultOf } from '../../src/testing/harness.ts'

/** A refusal as `sign` answers it. */
export interface Refusal {
  status: number
  code: unknown
  message: string
}

/** A new service (with `valueOnlyChains` as `[limits] value_only_chains`) and an account of a new sub-organization on it. */
export async function accountUnderLimits(options: { valueOnlyChains?: string[] } = {}) {
  const { valueOnlyChains } = options
  const h = await createHarness(valueOnlyChains ? { limits: { valueOnlyChains } } : {})
  const sub = await h.createSubOrganization({
    users: 1,
    wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] },
  })
  const eth = sub.addresses![0]!
  const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
  const submit = (path: Parameters<typeof h.submit>[0], parameters: Json) => {
    h.clock.advance(1)
    return h.submit(path, parameters, as)
  }
  /** A limit of 10 units of `asset` a rolling day on the account; its id. */
  const limit = async (asset: Json, allowedDestinations?: string[]) =>
    resultOf(
      'latchkey_create_spending_limit',
      await submit('latchkey_create_spending_limit', {
        spendingLimitName: 'daily',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: eth },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset,
        amount: '10',
        ...(allowedDestinations ? { allowedDestinations } : {}),
      }),
    ).spendingLimitId as string
  const sign = async (unsignedTransaction: string): Promise<200 | Refusal> => {
    const reply = await submit('sign_transaction', {
      signWith: eth,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction,
    })
    if (reply.status === 200) return 200
    const details = reply.body.details as Json | undefined
    return { status: reply.status, code: details?.errorCode, message: reply.body.message as string }
  }
  const used = async () =>
    ((await h.query('latchkey_list_spending_limits', {}, as)).body.spendingLimits as Json[]).map(
      (l) => l.used,
    )
  return { limit, sign, used, eth }
}

let nonce = 0
/** An unsigned EIP-1559 transaction on `chainId` paying no fee (a limit counts its value and calls alone); no `to`: a creation. */
export const unsignedTx = (chainId: number, to: string | undefined, value: bigint, data?: Hex) =>
  serializeTransaction({
    type: 'eip1559',
    chainId,
    nonce: nonce++,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    gas: 200_000n,
    ...(to ? { to: to as Hex } : {}),
    value,
    ...(data ? { data } : {}),
  })
