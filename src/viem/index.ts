/**
 * `latchkey/viem`: the signed-in user's Ethereum account as a viem `LocalAccount`
 * (`toLatchkeyAccount`), an EIP-1193 provider over the active session
 * (`createLatchkeyEip1193Provider`, which latchkey/wagmi builds on). Keys stay in the service:
 * every signature is an activity of the session. It does not load React, so server code may
 * import it; the hook `useLatchkeyAccount` is in `latchkey/viem/react`.
 */
export { type LatchkeyAccount, type ToLatchkeyAccountParameters, toLatchkeyAccount } from './account.ts'
export {
  isLatchkeyConsensusNeededError,
  LatchkeyConsensusNeededError,
  LatchkeyViemError,
} from './errors.ts'
export {
  type CreateLatchkeyEip1193ProviderParameters,
  createLatchkeyEip1193Provider,
  type LatchkeyEip1193Event,
  type LatchkeyEip1193Provider,
} from './provider.ts'
