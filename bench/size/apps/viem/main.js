// The viem-base app plus latchkey/viem: the Latchkey account as the wallet client's account, and
// the EIP-1193 provider. Its size minus viem-base's is latchkey/viem's cost beyond viem.
import { createLatchkeyEip1193Provider, toLatchkeyAccount } from 'latchkey/viem'
import { client, wallet } from '../viem-base/main.js'

const address = '0x000000000000000000000000000000000000dEaD'
const account = toLatchkeyAccount(client, { address })
const provider = createLatchkeyEip1193Provider(client, {
  chains: [
    {
      id: 31337,
      name: 'Local',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: ['http://127.0.0.1:8545'] } },
    },
  ],
})
document.addEventListener('dblclick', async () => {
  const hash = await wallet(account).sendTransaction({ to: address, value: 1n })
  const accounts = await provider.request({ method: 'eth_requestAccounts' })
  document.title = `${hash} ${accounts}`
})
