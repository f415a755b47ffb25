import type { AddressFormat } from '@latchkey/protocol'

/** Chains offered when creating a wallet or adding an account (proper nouns: not translated). */
export const CHAIN_NAMES = {
  ethereum: 'Ethereum',
  solana: 'Solana',
  bitcoin: 'Bitcoin',
  'bitcoin-taproot': 'Bitcoin Taproot',
  'bitcoin-testnet': 'Bitcoin Testnet',
  cosmos: 'Cosmos',
  sei: 'Sei',
  tron: 'Tron',
  xrp: 'XRP',
  dogecoin: 'Dogecoin',
  sui: 'Sui',
  aptos: 'Aptos',
  stellar: 'Stellar',
  ton: 'TON',
} as const
export type ChainName = keyof typeof CHAIN_NAMES

/** The network name of an account, from its address format. */
export function networkOf(addressFormat: AddressFormat): string {
  if (addressFormat === 'ADDRESS_FORMAT_ETHEREUM') return 'Ethereum'
  if (addressFormat === 'ADDRESS_FORMAT_SOLANA') return 'Solana'
  if (addressFormat.startsWith('ADDRESS_FORMAT_BITCOIN_')) {
    const net = addressFormat.split('_')[3] ?? ''
    return net === 'MAINNET' ? 'Bitcoin' : `Bitcoin ${net.charAt(0)}${net.slice(1).toLowerCase()}`
  }
  if (addressFormat.startsWith('ADDRESS_FORMAT_DOGE_')) return 'Dogecoin'
  if (addressFormat.startsWith('ADDRESS_FORMAT_TON_')) return 'TON'
  const names: Partial<Record<AddressFormat, string>> = {
    ADDRESS_FORMAT_COSMOS: 'Cosmos',
    ADDRESS_FORMAT_TRON: 'Tron',
    ADDRESS_FORMAT_SUI: 'Sui',
    ADDRESS_FORMAT_APTOS: 'Aptos',
    ADDRESS_FORMAT_SEI: 'Sei',
    ADDRESS_FORMAT_XLM: 'Stellar',
    ADDRESS_FORMAT_XRP: 'XRP',
    ADDRESS_FORMAT_COMPRESSED: 'Public key',
    ADDRESS_FORMAT_UNCOMPRESSED: 'Public key',
  }
  return names[addressFormat] ?? addressFormat
}

/** `0x1234…abcd`: start and end of an address, for display beside the full text. */
export const shortAddress = (address: string) =>
  address.length > 18 ? `${address.slice(0, 8)}…${address.slice(-6)}` : address
