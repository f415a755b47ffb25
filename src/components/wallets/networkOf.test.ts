import { ADDRESS_FORMATS } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { CHAINS } from '../../core/chains.ts'
import { networkOf } from './networkOf.ts'

describe('networkOf', () => {
  it('names the network of every address format', () => {
    expect(Object.fromEntries(ADDRESS_FORMATS.map((format) => [format, networkOf(format)]))).toEqual({
      ADDRESS_FORMAT_UNCOMPRESSED: 'Public key',
      ADDRESS_FORMAT_COMPRESSED: 'Public key',
      ADDRESS_FORMAT_ETHEREUM: 'Ethereum',
      ADDRESS_FORMAT_SOLANA: 'Solana',
      ADDRESS_FORMAT_COSMOS: 'Cosmos',
      ADDRESS_FORMAT_TRON: 'Tron',
      ADDRESS_FORMAT_SUI: 'Sui',
      ADDRESS_FORMAT_APTOS: 'Aptos',
      ADDRESS_FORMAT_SEI: 'Sei',
      ADDRESS_FORMAT_XLM: 'Stellar',
      ADDRESS_FORMAT_XRP: 'XRP',
      ADDRESS_FORMAT_BITCOIN_MAINNET_P2PKH: 'Bitcoin',
      ADDRESS_FORMAT_BITCOIN_MAINNET_P2SH: 'Bitcoin',
      ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH: 'Bitcoin',
      ADDRESS_FORMAT_BITCOIN_MAINNET_P2WSH: 'Bitcoin',
      ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR: 'Bitcoin',
      ADDRESS_FORMAT_BITCOIN_TESTNET_P2PKH: 'Bitcoin Testnet',
      ADDRESS_FORMAT_BITCOIN_TESTNET_P2SH: 'Bitcoin Testnet',
      ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH: 'Bitcoin Testnet',
      ADDRESS_FORMAT_BITCOIN_TESTNET_P2WSH: 'Bitcoin Testnet',
      ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR: 'Bitcoin Testnet',
      ADDRESS_FORMAT_BITCOIN_SIGNET_P2PKH: 'Bitcoin Signet',
      ADDRESS_FORMAT_BITCOIN_SIGNET_P2SH: 'Bitcoin Signet',
      ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH: 'Bitcoin Signet',
      ADDRESS_FORMAT_BITCOIN_SIGNET_P2WSH: 'Bitcoin Signet',
      ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR: 'Bitcoin Signet',
      ADDRESS_FORMAT_BITCOIN_REGTEST_P2PKH: 'Bitcoin Regtest',
      ADDRESS_FORMAT_BITCOIN_REGTEST_P2SH: 'Bitcoin Regtest',
      ADDRESS_FORMAT_BITCOIN_REGTEST_P2WPKH: 'Bitcoin Regtest',
      ADDRESS_FORMAT_BITCOIN_REGTEST_P2WSH: 'Bitcoin Regtest',
      ADDRESS_FORMAT_BITCOIN_REGTEST_P2TR: 'Bitcoin Regtest',
      ADDRESS_FORMAT_DOGE_MAINNET: 'Dogecoin',
      ADDRESS_FORMAT_DOGE_TESTNET: 'Dogecoin',
      ADDRESS_FORMAT_TON_V3R2: 'TON',
      ADDRESS_FORMAT_TON_V4R2: 'TON',
      ADDRESS_FORMAT_TON_V5R1: 'TON',
      ADDRESS_FORMAT_SPARK_MAINNET: 'Spark',
      ADDRESS_FORMAT_SPARK_REGTEST: 'Spark',
    })
  })

  it('names each chain of the chain list by its own name', () => {
    for (const chain of [
      'ethereum',
      'solana',
      'bitcoin',
      'cosmos',
      'sei',
      'tron',
      'xrp',
      'dogecoin',
      'sui',
      'aptos',
      'stellar',
      'ton',
    ] as const)
      expect(networkOf(CHAINS[chain].addressFormat)).toBe(CHAINS[chain].name)
  })
})
