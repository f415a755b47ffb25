import type { AccountSpec, AddressFormat, Curve } from '@latchkey/protocol'

interface ChainDefinition {
  curve: Curve
  addressFormat: AddressFormat
  /** Conventional derivation path of account `i`. */
  path: (index: number) => string
}

/** Default account specs per chain (paths as in design/protocol.md and each chain's wallets). */
export const CHAINS = {
  ethereum: {
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
    path: (i) => `m/44'/60'/${i}'/0/0`,
  },
  solana: {
    curve: 'CURVE_ED25519',
    addressFormat: 'ADDRESS_FORMAT_SOLANA',
    path: (i) => `m/44'/501'/${i}'/0'`,
  },
  bitcoin: {
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH',
    path: (i) => `m/84'/0'/${i}'/0/0`,
  },
  'bitcoin-taproot': {
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR',
    path: (i) => `m/86'/0'/${i}'/0/0`,
  },
  'bitcoin-testnet': {
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH',
    path: (i) => `m/84'/1'/${i}'/0/0`,
  },
  cosmos: {
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_COSMOS',
    path: (i) => `m/44'/118'/${i}'/0/0`,
  },
  sei: { curve: 'CURVE_SECP256K1', addressFormat: 'ADDRESS_FORMAT_SEI', path: (i) => `m/44'/118'/${i}'/0/0` },
  tron: {
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_TRON',
    path: (i) => `m/44'/195'/${i}'/0/0`,
  },
  xrp: { curve: 'CURVE_SECP256K1', addressFormat: 'ADDRESS_FORMAT_XRP', path: (i) => `m/44'/144'/${i}'/0/0` },
  dogecoin: {
    curve: 'CURVE_SECP256K1',
    addressFormat: 'ADDRESS_FORMAT_DOGE_MAINNET',
    path: (i) => `m/44'/3'/${i}'/0/0`,
  },
  sui: { curve: 'CURVE_ED25519', addressFormat: 'ADDRESS_FORMAT_SUI', path: (i) => `m/44'/784'/${i}'/0'/0'` },
  aptos: {
    curve: 'CURVE_ED25519',
    addressFormat: 'ADDRESS_FORMAT_APTOS',
    path: (i) => `m/44'/637'/${i}'/0'/0'`,
  },
  stellar: { curve: 'CURVE_ED25519', addressFormat: 'ADDRESS_FORMAT_XLM', path: (i) => `m/44'/148'/${i}'` },
  ton: { curve: 'CURVE_ED25519', addressFormat: 'ADDRESS_FORMAT_TON_V5R1', path: (i) => `m/44'/607'/${i}'` },
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
