// Contracts that ARE their chain's native coin: what they hold for an account is its native
// balance, so the coin leaves the account through them as well as through a call's value.

/** How one contract moves its chain's native coin. */
export interface NativeTokenContract {
  /** Its 0x address, lower case. */
  contract: string
  /**
   * `erc20`: an ERC-20 whose `transfer`, `transferFrom` (under an allowance) and `approve` move
   * the account's native balance with no value sent (Celo's CeloToken, through the chain's
   * transfer precompile at 0xfd; Moonbeam's native-token ERC-20 precompile, through the balances
   * pallet; Evmos' WEVMOS, the WERC20 precompile over the coin's bank balance). `value`: it moves only the value a call sends it and keeps no allowances (Polygon
   * PoS's MRC20: `transfer(to, value)` forwards `msg.value` when it equals `value`, `withdraw`
   * burns it, `transferWithSig` is disabled).
   */
  moves: 'erc20' | 'value'
}

const CELO_TOKEN = '0x471ece3750da237f93b8e339c536989b8978a438'
const MOONBEAM_NATIVE_ERC20 = '0x0000000000000000000000000000000000000802'

/**
 * By CAIP-2 chain. Each address is the one the chain's own client or documentation names: Celo's
 * node (celo-org/op-geth `contracts/addresses`: mainnet and Celo Sepolia at 0x471E…a438,
 * Alfajores and Baklava at their own), Moonbeam's docs (the same precompile on Moonbeam, Moonriver
 * and Moonbase Alpha), Evmos' node (evmos/evmos `WEVMOSContractMainnet` 0xD494…d517 and
 * `WEVMOSContractTestnet` 0xcc49…8210, in precompiles/erc20 and later x/evm/types/params.go, which
 * app/upgrades/v17's STRv2 migration registers as the aevmos and atevmos token pairs, precompiles
 * over the bank balance, on the chains utils/utils.go names evmos_9001 and evmos_9000; "two
 * interfaces to the same token": docs.cosmos.network, WERC20), Polygon's genesis contract (`MRC20` at 0x…1010 on PoS mainnet). A
 * chain not listed has no such contract the limits know of: under an ERC-20 limit of a chain on
 * no list a call sending value is refused (spendOf.ts, docs/spending-limits.md).
 */
export const NATIVE_TOKEN_CONTRACTS: Readonly<Record<string, NativeTokenContract>> = {
  'eip155:42220': { contract: CELO_TOKEN, moves: 'erc20' },
  'eip155:11142220': { contract: CELO_TOKEN, moves: 'erc20' },
  'eip155:44787': { contract: '0xf194afdf50b03e69bd7d057c1aa9e10c9954e4c9', moves: 'erc20' },
  'eip155:62320': { contract: '0xddc9be57f553fe75752d61606b94cbd7e0264ef8', moves: 'erc20' },
  'eip155:1284': { contract: MOONBEAM_NATIVE_ERC20, moves: 'erc20' },
  'eip155:1285': { contract: MOONBEAM_NATIVE_ERC20, moves: 'erc20' },
  'eip155:1287': { contract: MOONBEAM_NATIVE_ERC20, moves: 'erc20' },
  'eip155:9001': { contract: '0xd4949664cd82660aae99bedc034a0dea8a0bd517', moves: 'erc20' },
  'eip155:9000': { contract: '0xcc491f589b45d4a3c679016195b3fb87d7848210', moves: 'erc20' },
  'eip155:137': { contract: '0x0000000000000000000000000000000000001010', moves: 'value' },
}
