// What an app using latchkey/core and viem already ships: a Latchkey client that signs in and
// signs payloads, and a viem wallet client that sends a transaction and signs typed data. The
// latchkey/viem app adds the adapter to exactly this; the difference is the adapter's cost.
import { createLatchkey, signRawPayloads } from 'latchkey/core'
import { createWalletClient, http, parseEther } from 'viem'

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

export function wallet(account = address) {
  return createWalletClient({ account, chain, transport: http() })
}

const output = document.getElementById('root')
document.addEventListener('click', async () => {
  const hash = await wallet().sendTransaction({ to: address, value: parseEther('0.01') })
  const typed = await wallet().signTypedData({
    domain: { name: 'Size' },
    types: { Ping: [{ name: 'n', type: 'uint256' }] },
    primaryType: 'Ping',
    message: { n: 1n },
  })
  const { signatures } = await signRawPayloads(client, {
    signWith: address,
    payloads: ['00'],
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_KECCAK256',
  })
  output.textContent = `${hash} ${typed} ${signatures.length}`
})
