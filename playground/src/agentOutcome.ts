import { formatEther } from 'viem'

/** What a refused send's error carries (a `SpendingLimitExceededError`, or any error with a code). */
export interface RefusalLike {
  code?: string | undefined
  message?: string | undefined
  used?: string | undefined
  limit?: string | undefined
  remaining?: string | undefined
}

const eth = (wei: string | undefined) => (wei && /^\d+$/.test(wei) ? `${formatEther(BigInt(wei))} ETH` : '?')

/**
 * A refused send in words a user reads, its code last for the developer: "the allowance is used up
 * (0.01 ETH of 0.01 ETH used, 0 ETH left). SPENDING_LIMIT_EXCEEDED".
 */
export function refusalWords(failure: RefusalLike): string {
  if (failure.code === 'SPENDING_LIMIT_EXCEEDED') {
    const numbers = `${eth(failure.used)} of ${eth(failure.limit)} used, ${eth(failure.remaining)} left`
    const why =
      failure.remaining === '0'
        ? 'the allowance is used up'
        : 'this send is more than what is left of the allowance'
    return `${why} (${numbers}). SPENDING_LIMIT_EXCEEDED`
  }
  return `${failure.message ?? 'the service refused it'}. ${failure.code ?? 'ERROR'}`
}

/** "5 signed, 3 refused: 0.01 ETH spent." — the run's outcome in one sentence, for the status line. */
export function runSummary(signed: number, refused: number, eachWei: bigint): string {
  return `${signed} signed, ${refused} refused: ${formatEther(eachWei * BigInt(signed))} ETH spent.`
}

/**
 * The allowance this page's agent was granted, by its id: the user may have other key-scoped limits
 * (an earlier agent's, a back end's), and the first one listed is not necessarily the agent's.
 */
export function agentLimitOf<T extends { spendingLimitId: string }>(
  limits: readonly T[] | undefined,
  spendingLimitId: string | null,
): T | undefined {
  return spendingLimitId ? limits?.find((limit) => limit.spendingLimitId === spendingLimitId) : undefined
}

/**
 * The allowance granted to the key `publicKey`, found in the user's organization: the user holding
 * that API key, and the spending limit scoped to it.
 */
export function grantOf(
  publicKey: string | undefined,
  users:
    | readonly {
        userId: string
        apiKeys: readonly { apiKeyId: string; credential: { publicKey: string } }[]
      }[]
    | undefined,
  limits: readonly { spendingLimitId: string; scope: { type: string; apiKeyId?: string } }[] | undefined,
): { userId: string; spendingLimitId: string } | null {
  if (!publicKey || !users || !limits) return null
  for (const user of users)
    for (const key of user.apiKeys) {
      if (key.credential.publicKey.toLowerCase() !== publicKey.toLowerCase()) continue
      const limit = limits.find(
        (entry) =>
          entry.scope.type === 'SPENDING_LIMIT_SCOPE_API_KEY' && entry.scope.apiKeyId === key.apiKeyId,
      )
      if (limit) return { userId: user.userId, spendingLimitId: limit.spendingLimitId }
    }
  return null
}
