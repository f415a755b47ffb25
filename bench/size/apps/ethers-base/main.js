// What an app using latchkey/core and ethers v6 already ships: a Latchkey client that signs
// payloads, and an injected-wallet signer that calls a contract and signs typed data. The
// latchkey/ethers app adds the adapter to exactly this; the difference is the adapter's cost.
import { BrowserProvider, Contract } from 'ethers'
import { createLatchkey, signRawPayloads } from 'latchkey/core'

export const client = createLatchkey({
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
})
export const provider = new BrowserProvider(window.ethereum)
const address = '0x000000000000000000000000000000000000dEaD'

export async function use(signer) {
  const token = new Contract(address, ['function transfer(address to, uint256 amount)'], signer)
  const sent = await token.transfer(address, 1n)
  const typed = await signer.signTypedData(
    { name: 'Size' },
    { Ping: [{ name: 'n', type: 'uint256' }] },
    { n: 1n },
  )
  return `${sent.hash} ${typed}`
}

document.addEventListener('click', async () => {
  const { signatures } = await signRawPayloads(client, {
    signWith: address,
    payloads: ['00'],
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_KECCAK256',
  })
  document.title = `${await use(await provider.getSigner())} ${signatures.length}`
})
