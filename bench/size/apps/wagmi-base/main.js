// What an app using latchkey/core and wagmi already ships: a Latchkey client that signs payloads,
// and a wagmi config (injected connector, http transport) used the way wagmi apps commonly are:
// connect, send a transaction and wait for its receipt, read and write a contract, sign a message
// and typed data. The latchkey/wagmi app adds the connector to exactly this; the difference is the
// connector's cost, latchkey/viem's EIP-1193 provider and account that it builds on included.
import { createLatchkey, signRawPayloads } from 'latchkey/core'
import { parseEther } from 'viem'
import { createConfig, http, injected } from 'wagmi'
import {
  connect,
  readContract,
  sendTransaction,
  signMessage,
  signTypedData,
  waitForTransactionReceipt,
  writeContract,
} from 'wagmi/actions'

export const client = createLatchkey({
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
})
const chain = {
  id: 31337,
  name: 'Local',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1:8545'] } },
}
const address = '0x000000000000000000000000000000000000dEaD'

export function wagmiConfig(connectors) {
  return createConfig({ chains: [chain], connectors, transports: { [chain.id]: http() } })
}

const abi = [
  {
    type: 'function',
    name: 'transfer',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [{ type: 'bool' }],
  },
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [{ name: 'owner', type: 'address' }],
    outputs: [{ type: 'uint256' }],
  },
]

/** Connects `connector`, then sends, writes, reads and signs through wagmi's actions. */
export async function use(config, connector) {
  await connect(config, { connector })
  const hash = await sendTransaction(config, { to: address, value: parseEther('0.01') })
  const receipt = await waitForTransactionReceipt(config, { hash })
  const written = await writeContract(config, { address, abi, functionName: 'transfer', args: [address, 1n] })
  const balance = await readContract(config, { address, abi, functionName: 'balanceOf', args: [address] })
  const signature = await signMessage(config, { message: 'size' })
  const typed = await signTypedData(config, {
    domain: { name: 'Size' },
    types: { Ping: [{ name: 'n', type: 'uint256' }] },
    primaryType: 'Ping',
    message: { n: 1n },
  })
  return `${receipt.status} ${written} ${balance} ${signature} ${typed}`
}

const output = document.getElementById('root')
document.addEventListener('click', async () => {
  const config = wagmiConfig([injected()])
  const used = await use(config, config.connectors[0])
  const { signatures } = await signRawPayloads(client, {
    signWith: address,
    payloads: ['00'],
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_KECCAK256',
  })
  output.textContent = `${used} ${signatures.length}`
})
