// The ethers-base app plus latchkey/ethers: the same contract call and typed data through a
// LatchkeySigner. Its size minus ethers-base's is latchkey/ethers' cost beyond ethers.
import { LatchkeySigner } from 'latchkey/ethers'
import { client, provider, use } from '../ethers-base/main.js'

document.addEventListener('dblclick', async () => {
  const signer = new LatchkeySigner(
    client,
    { address: '0x000000000000000000000000000000000000dEaD' },
    provider,
  )
  document.title = await use(signer)
})
