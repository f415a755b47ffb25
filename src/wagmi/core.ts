/**
 * `latchkey/wagmi/core`: the connector of `latchkey/wagmi` for an app on @wagmi/core without React
 * (`npm install @wagmi/core viem`). The same code; it takes `createConnector` from @wagmi/core
 * instead of wagmi, so it needs neither wagmi nor React.
 */

import { ChainNotConfiguredError, type CreateConnectorFn, createConnector } from '@wagmi/core'
import type { LatchkeyEip1193Provider } from '../viem/provider.ts'
import { latchkeyConnector } from './connector.ts'
import type { LatchkeyParameters, Properties } from './types.ts'

export type { LatchkeyParameters } from './types.ts'

latchkey.type = 'latchkey' as const

/** The @wagmi/core connector: `createConfig({ connectors: [latchkey({ client })], … })`. */
export function latchkey(
  parameters: LatchkeyParameters,
): CreateConnectorFn<LatchkeyEip1193Provider, Properties> {
  return createConnector(latchkeyConnector(parameters, ChainNotConfiguredError))
}
