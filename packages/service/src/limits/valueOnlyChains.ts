// EVM chains whose native coin leaves an account only as the value of a call (and the fee): no
// precompile, predeploy or system contract there moves the caller's native balance when it is
// called with none. Under a native limit of such a chain a call into a contract is counted by its
// value; on any other chain it is refused (limits/spendOf.ts), because some chains have contracts
// that are the native balance itself or spend it on the caller's word: Sei's IBC precompile
// (0x…1009 `transfer(…, denom "usei", amount, …)`, nonpayable) and its bank, staking and
// distribution precompiles; on Cosmos EVM chains (Evmos and its successors) the native coin's
// WERC20 precompile, whose `transfer` moves the bank balance, and the ICS20 and staking
// precompiles. A list of chains where the coin moves only as value can be checked; a list of
// every chain where it does not cannot.
//
// Each entry was checked against the chain's client code or documentation:
// - Ethereum and its testnets: go-ethereum's precompiles (core/vm/contracts.go) are pure
//   functions of their input (`Run(input)`, no state); the system contracts take value: the
//   deposit contract and the EIP-7002 and EIP-7251 request contracts charge their fee as
//   `msg.value`, EIP-4788 and EIP-2935 only store and read roots and hashes.
// - Local dev chains (31337: anvil and Hardhat; 1337: geth --dev and Ganache): the same
//   precompiles. anvil adds others only when started with `--celo` or `--network` (foundry
//   crates/evm/networks: the Celo transfer precompile at 0xfd moves any balance there); the
//   service's dev node (dev/startEvmNode.ts) starts a plain one.
// - OP Stack (OP Mainnet, Base and their Sepolia testnets): Ethereum's precompiles and P-256;
//   the predeploys (specs.optimism.io, "Predeploys") take value: L2ToL1MessagePasser's
//   `initiateWithdrawal` and L2StandardBridge's `bridgeETH`/`withdraw` send `msg.value` (an ETH
//   `withdraw` reverts unless `msg.value` equals its amount), LegacyERC20ETH's transfer,
//   approve and transferFrom revert, the fee vaults pay out only their own balance.
// - Arbitrum (One, Nova, Sepolia): ArbOS's precompiles (docs.arbitrum.io "Precompiles
//   reference"; nitro precompiles/): ArbSys's `withdrawEth` and `sendTxToL1` are payable and
//   send the value, ArbWasm's `activateProgram` takes its fee as value, ArbRetryableTx redeems
//   from a ticket's escrow, ArbOwner answers only the chain's owners, ArbNativeToken only its
//   native-token owners, ArbDebug only debug chains. Its L1 cost is charged as gas, within the gas limit.
// - Linea and Linea Sepolia: Ethereum's precompiles ("Differences between Ethereum and Linea":
//   no others); the L2MessageService's `sendMessage` is payable and sends `msg.value` less its
//   fee. Its gas price covers the L1 cost.
// - Polygon PoS: bor's precompiles are Ethereum's (bor core/vm/contracts.go); its genesis
//   contracts are the validator set and state receiver (system calls) and MRC20, which moves
//   only the value it is sent (nativeTokenContracts.ts).
// Left out: any chain not checked, Scroll included. Its L1 fee, deducted beside the gas limit's
// fee (docs.scroll.io "Transaction Fees on Scroll": priced by its L1GasPriceOracle at
// 0x5300…0002), was the reason once, and is now priced (sending/l1DataFee.ts asks that oracle
// too), so a native limit there counts the fee paid; what keeps it off is that its predeploys
// (L2ScrollMessenger, the gateways, WETH, the fee vault) and precompiles have not been checked
// against this list's rule. Checked, it can join (docs/spending-limits.md).

/** CAIP-2 chain id → the chain's name, for messages. */
export const VALUE_ONLY_CHAINS: Readonly<Record<string, string>> = {
  'eip155:1': 'Ethereum',
  'eip155:11155111': 'Sepolia',
  'eip155:17000': 'Holesky',
  'eip155:560048': 'Hoodi',
  'eip155:31337': 'a local dev chain (anvil, Hardhat)',
  'eip155:1337': 'a local dev chain (geth --dev, Ganache)',
  'eip155:10': 'OP Mainnet',
  'eip155:11155420': 'OP Sepolia',
  'eip155:8453': 'Base',
  'eip155:84532': 'Base Sepolia',
  'eip155:42161': 'Arbitrum One',
  'eip155:42170': 'Arbitrum Nova',
  'eip155:421614': 'Arbitrum Sepolia',
  'eip155:59144': 'Linea',
  'eip155:59141': 'Linea Sepolia',
  'eip155:137': 'Polygon PoS',
}
