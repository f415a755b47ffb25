/** Networks the playground may be pointed at, by CAIP-2 id (`eip155:<chain id>`). */
const NAMES: Record<string, string> = {
  'eip155:1': 'Ethereum',
  'eip155:11155111': 'Ethereum Sepolia',
  'eip155:17000': 'Ethereum Holesky',
  'eip155:8453': 'Base',
  'eip155:84532': 'Base Sepolia',
  'eip155:10': 'OP Mainnet',
  'eip155:11155420': 'OP Sepolia',
  'eip155:42161': 'Arbitrum One',
  'eip155:421614': 'Arbitrum Sepolia',
  'eip155:137': 'Polygon',
  'eip155:80002': 'Polygon Amoy',
  // The id of anvil's and Hardhat's local node (what `npm start` runs).
  'eip155:31337': 'Local (anvil)',
}

/** A network's name for people ("Local (anvil)", "Ethereum Sepolia"); an unknown one by its id. */
export function networkName(caip2: string): string {
  return NAMES[caip2] ?? (caip2.startsWith('eip155:') ? `Chain ${caip2.slice('eip155:'.length)}` : caip2)
}
