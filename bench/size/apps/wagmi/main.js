// The wagmi-base app plus latchkey/wagmi: the same actions through the Latchkey connector. Its
// size minus wagmi-base's is latchkey/wagmi's cost beyond wagmi and viem (latchkey/viem's
// EIP-1193 provider and account included, since the connector brings them).
import { latchkey } from 'latchkey/wagmi'
import { client, use, wagmiConfig } from '../wagmi-base/main.js'

document.addEventListener('dblclick', async () => {
  const config = wagmiConfig([latchkey({ client })])
  document.title = await use(config, config.connectors[0])
})
