import type { UiOptions } from '../ui/uiOptions.ts'

export interface SpendingLimitsProps extends UiOptions {
  /**
   * The chain whose native unit new limits cap, e.g. `eip155:8453` (ETH) or a `solana:` chain
   * (SOL). Limits already set are all shown, whatever their chain or asset.
   */
  caip2: string
  /** Called after a limit is set, changed or removed. */
  onChanged?: (() => void) | undefined
  className?: string | undefined
}
