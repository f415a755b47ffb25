import type { AddressFormat } from '@latchkey/protocol'
import { CHAINS } from '../../core/chains.ts'

/** The network name of an account, from its address format. */
export function networkOf(addressFormat: AddressFormat): string {
  // Formats of one network (mainnet/testnet, wallet versions) share its name; only Bitcoin names its test networks.
  if (addressFormat.startsWith('ADDRESS_FORMAT_BITCOIN_')) {
    const net = addressFormat.split('_')[3] ?? ''
    return net === 'MAINNET'
      ? CHAINS.bitcoin.name
      : `${CHAINS.bitcoin.name} ${net.charAt(0)}${net.slice(1).toLowerCase()}`
  }
  if (addressFormat.startsWith('ADDRESS_FORMAT_DOGE_')) return CHAINS.dogecoin.name
  if (addressFormat.startsWith('ADDRESS_FORMAT_TON_')) return CHAINS.ton.name
  if (addressFormat.startsWith('ADDRESS_FORMAT_SPARK_')) return 'Spark'
  if (addressFormat === 'ADDRESS_FORMAT_COMPRESSED' || addressFormat === 'ADDRESS_FORMAT_UNCOMPRESSED')
    return 'Public key'
  return Object.values(CHAINS).find((chain) => chain.addressFormat === addressFormat)?.name ?? addressFormat
}

/** `0x1234…abcd`: start and end of an address, for display beside the full text. */
export const shortAddress = (address: string) =>
  address.length > 18 ? `${address.slice(0, 8)}…${address.slice(-6)}` : address
