import type { Latchkey } from '../core/createLatchkey.ts'

export type LatchkeyParameters = {
  /** The kit's client; give the same one to `<LatchkeyProvider client={…}>`. */
  client: Latchkey
  /**
   * Called by `connect()` (wagmi's `useConnect`) when nobody is signed in; resolve once signed in,
   * e.g. `() => authModal.open()`. Without it such a `connect()` fails with a 4001 error. Signing
   * in by any other path connects the connector by itself.
   */
  signIn?: (() => Promise<unknown>) | undefined
  /**
   * Give a user who signs in without an Ethereum account one, in a new wallet of this name (the
   * embedded-wallet pattern). Without it such a user stays disconnected until an account exists
   * and wagmi reconnects (or the provider's `refreshAccounts()` runs).
   * @default undefined
   */
  createWallet?: { walletName: string } | undefined
  /**
   * JSON-RPC URL per chain id for the provider's reads and broadcasts.
   * @default the URL of the config's `http()` transport for that chain, else the chain's default
   */
  rpcUrls?: Record<number, string> | undefined
  /**
   * wagmi's `useSendCalls` batches are paid by the organization's gas sponsor (the provider's
   * `sponsor`); without it an app asks per batch with the `gasSponsorship` capability.
   * @default false
   */
  sponsor?: boolean | undefined
}

export type Properties = {
  /** The kit's client this connector follows. */
  readonly client: Latchkey
  onConnect(connectInfo: { chainId: string }): void
}
