/**
 * `latchkey/wagmi`: a wagmi connector for the Latchkey wallet, kept in sync with the kit's
 * sessions. Signing in (through `<AuthModal/>` or any sign-in action) connects it, signing out or
 * an expired session disconnects it, switching session changes its accounts, and after a reload
 * with a live session wagmi reconnects it without a prompt. It holds no session state of its own:
 * it follows the events of `latchkey/viem`'s EIP-1193 provider, which follows the kit's session
 * store.
 *
 * It takes `createConnector` from `wagmi`, which re-exports @wagmi/core's: `npm install wagmi viem`
 * is all it needs (npm may leave @wagmi/core nested inside wagmi, out of the app's reach). An app on
 * @wagmi/core without React imports the same connector from `latchkey/wagmi/core`.
 */

import { ChainNotConfiguredError, type CreateConnectorFn, createConnector } from 'wagmi'
import type { LatchkeyEip1193Provider } from '../viem/provider.ts'
import { latchkeyConnector } from './connector.ts'
import type { LatchkeyParameters, Properties } from './types.ts'

export type { LatchkeyParameters } from './types.ts'

latchkey.type = 'latchkey' as const

/** The wagmi connector: `createConfig({ connectors: [latchkey({ client })], … })`. */
export function latchkey(
  parameters: LatchkeyParameters,
): CreateConnectorFn<LatchkeyEip1193Provider, Properties> {
  return createConnector(latchkeyConnector(parameters, ChainNotConfiguredError))
}
