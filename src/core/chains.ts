import type { AccountSpec, AddressFormat, Curve } from '@latchkey/protocol'

interface ChainDefinition {
  /** Display name (a proper noun: not translated). */
  name: string
  curve: Curve
  addressFormat: AddressFormat
  /** Conventional derivation path of account `i`. */
  path: (index: number) => string
}

/** Every chain a wallet account can be made for: its name and default account spec (paths as each chain's wallets use them). */
export const CHAINS = {
  ethereum: {
    name: 'Ethereum',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
    path: (i) => `m/44'/60'/${i}'/0/0`,
  },
  solana: {
    name: 'Solana',
    curve: 'CURVE_ED25519',
    addressFormat: 'ADDRESS_FORMAT_SOLANA',
    path: (i) => `m/44'/501'/${i}'/0'`,
  },
  bitcoin: {
    name: 'Bitcoin',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH',
    path: (i) => `m/84'/0'/${i}'/0/0`,
  },
  'bitcoin-taproot': {
    name: 'Bitcoin Taproot',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR',
    path: (i) => `m/86'/0'/${i}'/0/0`,
  },
  'bitcoin-testnet': {
    name: 'Bitcoin Testnet',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH',
    path: (i) => `m/84'/1'/${i}'/0/0`,
  },
  cosmos: {
    name: 'Cosmos',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_COSMOS',
    path: (i) => `m/44'/118'/${i}'/0/0`,
  },
  sei: {
    name: 'Sei',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_SEI',
    path: (i) => `m/44'/118'/${i}'/0/0`,
  },
  tron: {
    name: 'Tron',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_TRON',
    path: (i) => `m/44'/195'/${i}'/0/0`,
  },
  xrp: {
    name: 'XRP',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_XRP',
    path: (i) => `m/44'/144'/${i}'/0/0`,
  },
  dogecoin: {
    name: 'Dogecoin',
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_DOGE_MAINNET',
    path: (i) => `m/44'/3'/${i}'/0/0`,
  },
  sui: {
    name: 'Sui',
    curve: 'CURVE_ED25519',
    addressFormat: 'ADDRESS_FORMAT_SUI',
    path: (i) => `m/44'/784'/${i}'/0'/0'`,
  },
  aptos: {
    name: 'Aptos',
    curve: 'CURVE_ED25519',
    addressFormat: 'ADDRESS_FORMAT_APTOS',
    path: (i) => `m/44'/637'/${i}'/0'/0'`,
  },
  stellar: {
    name: 'Stellar',
    curve: 'CURVE_ED25519',
    addressFormat: 'ADDRESS_FORMAT_XLM',
    path: (i) => `m/44'/148'/${i}'`,
  },
  ton: {
    name: 'TON',
    curve: 'CURVE_ED25519',
    addressFormat: 'ADDRESS_FORMAT_TON_V5R1',
    path: (i) => `m/44'/607'/${i}'`,
  },
} as const satisfies Record<string, ChainDefinition>

export type Chain = keyof typeof CHAINS

/** Chains a wallet gets when neither `accounts` nor `chains` is given. */
export const DEFAULT_CHAINS: readonly Chain[] = ['ethereum', 'solana']

/** The account spec of `chain` at account index `index` (default 0). */
export function accountSpecOf(chain: Chain, index = 0): AccountSpec {
  const definition: ChainDefinition = CHAINS[chain]
  if (!definition)
    throw new TypeError(`Unknown chain ${String(chain)}; known: ${Object.keys(CHAINS).join(', ')}`)
  return {
    curve: definition.curve,
    pathFormat: 'PATH_FORMAT_BIP32',
    path: definition.path(index),
    addressFormat: definition.addressFormat,
  }
}

/** Account specs for several chains at one index. */
export const accountSpecsOf = (chains: readonly Chain[], index = 0): AccountSpec[] =>
  chains.map((chain) => accountSpecOf(chain, index))
